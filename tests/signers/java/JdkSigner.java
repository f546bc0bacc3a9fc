import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.security.*;
import java.security.cert.*;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.*;
import javax.xml.crypto.dsig.*;
import javax.xml.crypto.dsig.dom.DOMSignContext;
import javax.xml.crypto.dsig.keyinfo.KeyInfo;
import javax.xml.crypto.dsig.keyinfo.KeyInfoFactory;
import javax.xml.crypto.dsig.spec.C14NMethodParameterSpec;
import javax.xml.crypto.dsig.spec.TransformParameterSpec;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.transform.TransformerFactory;
import javax.xml.transform.dom.DOMSource;
import javax.xml.transform.stream.StreamResult;
import org.w3c.dom.*;

/**
 * Signs SAML Responses with the JDK's own XML-DSig (javax.xml.crypto.dsig):
 * RSA-SHA256, SHA-256 digests, exclusive c14n, enveloped, the Signature
 * right after the element's Issuer. Usage: JdkSigner KEY.pk8.der CERT.pem.
 * One request per line on stdin, "FLAGS BASE64-XML"; one answer per line
 * on stdout, "OK BASE64-XML" or "ERR message". FLAGS (or "-"): A signs the
 * Response's Assertion, R the Response (after the Assertion), K puts the
 * certificate in KeyInfo (none without it), P writes "ds:" prefixes
 * (without it, an unprefixed Signature with a default namespace).
 */
public final class JdkSigner {
    static final String SAML = "urn:oasis:names:tc:SAML:2.0:assertion";

    public static void main(String[] args) throws Exception {
        PrivateKey key = KeyFactory.getInstance("RSA")
            .generatePrivate(new PKCS8EncodedKeySpec(Files.readAllBytes(Paths.get(args[0]))));
        X509Certificate cert;
        try (InputStream in = Files.newInputStream(Paths.get(args[1]))) {
            cert = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
        XMLSignatureFactory f = XMLSignatureFactory.getInstance("DOM");
        DocumentBuilderFactory dbf = DocumentBuilderFactory.newInstance();
        dbf.setNamespaceAware(true);
        dbf.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
        for (String line; (line = in.readLine()) != null; ) {
            try {
                String[] p = line.split(" ", 2);
                Document doc = dbf.newDocumentBuilder()
                    .parse(new ByteArrayInputStream(Base64.getDecoder().decode(p[1])));
                Element response = doc.getDocumentElement();
                if (p[0].contains("A")) {
                    sign(f, key, cert, child(response, SAML, "Assertion"), p[0]);
                }
                if (p[0].contains("R")) {
                    sign(f, key, cert, response, p[0]);
                }
                ByteArrayOutputStream xml = new ByteArrayOutputStream();
                TransformerFactory.newInstance().newTransformer()
                    .transform(new DOMSource(doc), new StreamResult(xml));
                out.println("OK " + Base64.getEncoder().encodeToString(xml.toByteArray()));
            } catch (Exception e) {
                out.println("ERR " + e.toString().replaceAll("\\s+", " "));
            }
        }
    }

    static Element child(Element parent, String ns, String name) {
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element && ns.equals(n.getNamespaceURI()) && name.equals(n.getLocalName())) {
                return (Element) n;
            }
        }
        throw new IllegalArgumentException(parent.getLocalName() + " has no " + name);
    }

    static void sign(XMLSignatureFactory f, PrivateKey key, X509Certificate cert, Element e,
                     String flags) throws Exception {
        e.setIdAttribute("ID", true);
        Reference ref = f.newReference("#" + e.getAttribute("ID"),
            f.newDigestMethod(DigestMethod.SHA256, null),
            List.of(f.newTransform(Transform.ENVELOPED, (TransformParameterSpec) null),
                    f.newTransform(CanonicalizationMethod.EXCLUSIVE, (TransformParameterSpec) null)),
            null, null);
        SignedInfo si = f.newSignedInfo(
            f.newCanonicalizationMethod(CanonicalizationMethod.EXCLUSIVE, (C14NMethodParameterSpec) null),
            f.newSignatureMethod(SignatureMethod.RSA_SHA256, null), List.of(ref));
        KeyInfo ki = null;
        if (flags.contains("K")) {
            KeyInfoFactory kif = f.getKeyInfoFactory();
            ki = kif.newKeyInfo(List.of(kif.newX509Data(List.of(cert))));
        }
        DOMSignContext ctx = new DOMSignContext(key, e, child(e, SAML, "Issuer").getNextSibling());
        if (flags.contains("P")) {
            ctx.putNamespacePrefix(XMLSignature.XMLNS, "ds");
        }
        f.newXMLSignature(si, ki).sign(ctx);
    }
}
