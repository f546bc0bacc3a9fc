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
import javax.xml.crypto.dsig.spec.ExcC14NParameterSpec;
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
 * certificate in KeyInfo, N a KeyName (the key's ID, as Keycloak writes
 * it: base64url of the SHA-256 of the public key) before it (no KeyInfo
 * without K or N), P writes "ds:" prefixes, D "dsig:" (without either, an
 * unprefixed Signature with a default namespace), X gives the Reference's
 * exclusive c14n an InclusiveNamespaces PrefixList="xs" (as Okta does), S
 * signs with RSA-SHA1 and SHA-1 digests (old Okta apps), a digit signs
 * with that key pair (0, the command line's, by default).
 * "+ KEY.pk8.der CERT.pem" loads one more pair: "OK n", its digit.
 */
public final class JdkSigner {
    static final String SAML = "urn:oasis:names:tc:SAML:2.0:assertion";

    public static void main(String[] args) throws Exception {
        List<PrivateKey> keys = new ArrayList<>();
        List<X509Certificate> certs = new ArrayList<>();
        load(keys, certs, args[0], args[1]);
        XMLSignatureFactory f = XMLSignatureFactory.getInstance("DOM");
        DocumentBuilderFactory dbf = DocumentBuilderFactory.newInstance();
        dbf.setNamespaceAware(true);
        dbf.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
        for (String line; (line = in.readLine()) != null; ) {
            try {
                String[] p = line.split(" ", 2);
                if (p[0].equals("+")) {
                    String[] files = p[1].split(" ");
                    if (keys.size() == 10) {
                        throw new IllegalStateException("ten key pairs at most");
                    }
                    load(keys, certs, files[0], files[1]);
                    out.println("OK " + (keys.size() - 1));
                    continue;
                }
                int k = 0;
                for (char c : p[0].toCharArray()) {
                    if (Character.isDigit(c)) {
                        k = c - '0';
                    }
                }
                PrivateKey key = keys.get(k);
                X509Certificate cert = certs.get(k);
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

    static void load(List<PrivateKey> keys, List<X509Certificate> certs, String der, String pem)
            throws Exception {
        keys.add(KeyFactory.getInstance("RSA")
            .generatePrivate(new PKCS8EncodedKeySpec(Files.readAllBytes(Paths.get(der)))));
        try (InputStream in = Files.newInputStream(Paths.get(pem))) {
            certs.add((X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in));
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
        TransformParameterSpec c14n = flags.contains("X")
            ? new ExcC14NParameterSpec(List.of("xs")) : null;
        Reference ref = f.newReference("#" + e.getAttribute("ID"),
            f.newDigestMethod(flags.contains("S") ? DigestMethod.SHA1 : DigestMethod.SHA256, null),
            List.of(f.newTransform(Transform.ENVELOPED, (TransformParameterSpec) null),
                    f.newTransform(CanonicalizationMethod.EXCLUSIVE, c14n)),
            null, null);
        SignedInfo si = f.newSignedInfo(
            f.newCanonicalizationMethod(CanonicalizationMethod.EXCLUSIVE, (C14NMethodParameterSpec) null),
            f.newSignatureMethod(flags.contains("S") ? SignatureMethod.RSA_SHA1
                                                     : SignatureMethod.RSA_SHA256, null),
            List.of(ref));
        KeyInfoFactory kif = f.getKeyInfoFactory();
        List<javax.xml.crypto.XMLStructure> content = new ArrayList<>();
        if (flags.contains("N")) {
            byte[] id = MessageDigest.getInstance("SHA-256").digest(cert.getPublicKey().getEncoded());
            content.add(kif.newKeyName(Base64.getUrlEncoder().withoutPadding().encodeToString(id)));
        }
        if (flags.contains("K")) {
            content.add(kif.newX509Data(List.of(cert)));
        }
        KeyInfo ki = content.isEmpty() ? null : kif.newKeyInfo(content);
        DOMSignContext ctx = new DOMSignContext(key, e, child(e, SAML, "Issuer").getNextSibling());
        if (flags.contains("P") || flags.contains("D")) {
            ctx.putNamespacePrefix(XMLSignature.XMLNS, flags.contains("D") ? "dsig" : "ds");
        }
        f.newXMLSignature(si, ki).sign(ctx);
    }
}
