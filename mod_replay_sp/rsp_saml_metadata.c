/* Metadata: the SP's own (what it publishes, and the copy its Lasso
 * servers are built from) and what is read from an IdP's (its signing
 * certificates, as bare public keys for Lasso, and its metadata without
 * them). */
#include <string.h>

#include <apr_base64.h>
#include <apr_strings.h>

#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "rsp_saml.h"
#include "rsp_saml_int.h"
#include "rsp_saml_shape.h"
#include "rsp_util.h"

/* The SP's metadata; with_keys 0 leaves the KeyDescriptors out (the copy
 * our LassoServer is built from: Lasso would load each key through an
 * xmlsec keys manager, which reads the system's CA bundle, and nothing of
 * ours uses the server's own public keys). */
const char *rsp_saml_metadata_xml(apr_pool_t *p, const rsp_saml_sp_t *sp,
                                  const char *base_url, int with_keys)
{
    static const char ki[] =
        "<ds:KeyInfo><ds:X509Data><ds:X509Certificate>%s"
        "</ds:X509Certificate></ds:X509Data></ds:KeyInfo>";
    /* What we decrypt, the IdP's choice among them: AES-GCM first
     * (saml2int SDP-ALG01), AES-CBC for IdPs without it, and the key
     * transports we accept, RSA-OAEP as XML Encryption 1.0 names it first
     * (every IdP has it), then as 1.1 does (digests and MGFs of its
     * EncryptedKey are the IdP's choice: all of SHA-1 and SHA-2). */
    static const char methods[] =
        "\n   <md:EncryptionMethod Algorithm=\"" RSP_ALG_AES256_GCM "\"/>"
        "\n   <md:EncryptionMethod Algorithm=\"" RSP_ALG_AES128_GCM "\"/>"
        "\n   <md:EncryptionMethod Algorithm=\"" RSP_ALG_AES256_CBC "\"/>"
        "\n   <md:EncryptionMethod Algorithm=\"" RSP_ALG_AES128_CBC "\"/>"
        "\n   <md:EncryptionMethod Algorithm=\"" RSP_ALG_RSA_OAEP_MGF1P "\"/>"
        "\n   <md:EncryptionMethod Algorithm=\"" RSP_ALG_RSA_OAEP "\"/>\n  ";
    const char *sign_kd, *enc_kd, *kds = "", *ext = "";

    /* A guard has no key pair of its own: its metadata (for its own
     * LassoServer only) has no KeyDescriptor. */
    if (sp->cert_b64 && with_keys) {
        sign_kd = apr_psprintf(p, ki, sp->cert_b64);
        enc_kd = apr_psprintf(p, ki, sp->enc_cert_b64 ? sp->enc_cert_b64
                                                      : sp->cert_b64);
        kds = apr_psprintf(p, "  <md:KeyDescriptor use=\"signing\">%s"
                           "</md:KeyDescriptor>\n"
                           "  <md:KeyDescriptor use=\"encryption\">%s%s"
                           "</md:KeyDescriptor>\n", sign_kd, enc_kd, methods);
    }

    /* Where a discovery service sends the browser back with its choice:
     * the login endpoint (IdP Discovery Protocol, returnIDParam=IdP). */
    if (sp->discovery_url && with_keys) {
        ext = apr_psprintf(
            p, "  <md:Extensions><idpdisc:DiscoveryResponse xmlns:idpdisc=\""
            RSP_IDPDISC_NS "\" Binding=\"" RSP_IDPDISC_NS "\" Location=\"%s/login\" "
            "index=\"0\"/></md:Extensions>\n", rsp_html_escape(p, base_url));
    }
    return apr_psprintf(
        p,
        "<?xml version=\"1.0\"?>\n"
        "<md:EntityDescriptor xmlns:md=\"urn:oasis:names:tc:SAML:2.0:metadata\" "
        "xmlns:ds=\"http://www.w3.org/2000/09/xmldsig#\" entityID=\"%s\">\n"
        " <md:SPSSODescriptor WantAssertionsSigned=\"true\" "
        "protocolSupportEnumeration=\"urn:oasis:names:tc:SAML:2.0:protocol\">\n"
        "%s%s"
        "  <md:SingleLogoutService "
        "Binding=\"urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect\" "
        "Location=\"%s/slo\"/>\n"
        "  <md:SingleLogoutService "
        "Binding=\"urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST\" "
        "Location=\"%s/slo\"/>\n"
        "  <md:AssertionConsumerService index=\"0\" isDefault=\"true\" "
        "Binding=\"urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST\" "
        "Location=\"%s/acs\"/>\n"
        " </md:SPSSODescriptor>\n"
        "</md:EntityDescriptor>\n",
        rsp_html_escape(p, sp->entity_id), ext, kds, rsp_html_escape(p, base_url),
        rsp_html_escape(p, base_url), rsp_html_escape(p, base_url));
}

const char *rsp_saml_metadata(apr_pool_t *p, const rsp_saml_sp_t *sp,
                              const char *base_url)
{
    return rsp_saml_metadata_xml(p, sp, base_url, 1);
}

/* The public keys of the IdP's signing certificates, PEM. Lasso holds
 * them as bare keys: xmlsec duplicates a key for every signature it
 * checks, and a key that carries its certificate is duplicated with it
 * (and re-decoded). Trust comes from the metadata, never from the
 * certificate's issuer, so nothing is lost. */
apr_array_header_t *rsp_saml_idp_public_keys(apr_pool_t *p,
                                             const apr_array_header_t *certs)
{
    apr_array_header_t *out = apr_array_make(p, certs->nelts ? certs->nelts : 1,
                                             sizeof(const char *));
    int i;

    for (i = 0; i < certs->nelts; i++) {
        const der_t *d = &APR_ARRAY_IDX(certs, i, der_t);
        const unsigned char *q = d->der;
        X509 *x = d2i_X509(NULL, &q, d->len);
        EVP_PKEY *key = x ? X509_get0_pubkey(x) : NULL;
        BIO *b = key ? BIO_new(BIO_s_mem()) : NULL;
        char *data;
        long n;

        if (b && PEM_write_bio_PUBKEY(b, key) == 1
            && (n = BIO_get_mem_data(b, &data)) > 0) {
            APR_ARRAY_PUSH(out, const char *) =
                apr_pstrmemdup(p, data, (apr_size_t)n);
        }
        BIO_free(b);
        X509_free(x);
    }
    return out;
}
