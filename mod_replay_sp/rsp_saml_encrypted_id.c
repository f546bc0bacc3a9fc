/* An EncryptedID that Lasso parsed (an assertion's Subject's, a
 * LogoutRequest's), decrypted by this module (rsp_saml_int.h). */
#include <string.h>

#include <apr_strings.h>

#include <lasso/lasso.h>
#include <lasso/utils.h>
#include <lasso/xml/saml-2.0/saml2_encrypted_element.h>
#include <lasso/xml/saml-2.0/saml2_name_id.h>
#include <libxml/tree.h>

#include "rsp_log.h"
#include "rsp_saml.h"
#include "rsp_saml_decrypt.h"
#include "rsp_saml_int.h"
#include "rsp_saml_shape.h"

#define NS_SAML "urn:oasis:names:tc:SAML:2.0:assertion"

/* The EncryptedID as Lasso holds it (its EncryptedData, and its
 * EncryptedKeys beside it), serialised: what was under the verified
 * signature, as Lasso read it. NULL when there is nothing to write. */
static const char *serialised(apr_pool_t *p, LassoSaml2EncryptedElement *e,
                              apr_size_t *len)
{
    xmlDocPtr doc;
    xmlNodePtr root, copy;
    xmlNsPtr ns;
    xmlChar *mem = NULL;
    int size = 0, ok = 1;
    GList *it;
    const char *out = NULL;

    if (!e->EncryptedData || !(doc = xmlNewDoc(BAD_CAST "1.0"))) {
        return NULL;
    }
    root = xmlNewDocNode(doc, NULL, BAD_CAST "EncryptedID", NULL);
    ns = root ? xmlNewNs(root, BAD_CAST NS_SAML, BAD_CAST "saml") : NULL;
    if (!root || !ns) {
        xmlFreeNode(root);
        xmlFreeDoc(doc);
        return NULL;
    }
    xmlSetNs(root, ns);
    xmlDocSetRootElement(doc, root);
    ok = (copy = xmlDocCopyNode(e->EncryptedData, doc, 1)) != NULL
        && xmlAddChild(root, copy) != NULL;
    for (it = e->EncryptedKey; ok && it; it = it->next) {
        ok = it->data && (copy = xmlDocCopyNode(it->data, doc, 1)) != NULL
            && xmlAddChild(root, copy) != NULL;
    }
    if (ok) {
        xmlDocDumpMemoryEnc(doc, &mem, &size, "UTF-8");
    }
    if (mem && size > 0) {
        out = apr_pstrmemdup(p, (const char *)mem, (apr_size_t)size);
        *len = (apr_size_t)size;
    }
    xmlFree(mem);
    xmlFreeDoc(doc);
    return out;
}

apr_status_t rsp_saml_encrypted_id_take(apr_pool_t *p, const rsp_saml_sp_t *sp,
                                        const char *issuer, const char *where,
                                        LassoSaml2NameID **name_id,
                                        LassoSaml2EncryptedElement **encrypted,
                                        const char **check,
                                        const char **detail)
{
    rsp_shape_t shape;
    rsp_name_id_t got;
    xmlDocPtr doc = NULL;
    LassoSaml2NameID *nid;
    const char *xml;
    apr_size_t len = 0;
    apr_status_t rv = APR_SUCCESS;
    int unwraps = 0;

    if (*name_id || !LASSO_IS_SAML2_ENCRYPTED_ELEMENT(*encrypted)
        || !(xml = serialised(p, *encrypted, &len))) {
        REFUSE("subject", "%s from %s: no NameID and no EncryptedID to "
               "decrypt", where, issuer ? issuer : "(no Issuer)");
    }
    if ((rv = rsp_saml_encrypted_id_shape(&shape, p, xml, len, issuer, &doc,
                                          check, detail)) != APR_SUCCESS) {
        *detail = apr_psprintf(p, "%s: %s", where, *detail);
        goto done;
    }
    rsp_log(RSP_LOG_DEBUG, "decrypting the EncryptedID of %s from %s (data "
            "%s, key transport %s) with %d key%s: %s", where, shape.issuer,
            rsp_alg_name(shape.data_alg), shape.key_desc,
            sp->dec_keys->nelts, sp->dec_keys->nelts == 1 ? "" : "s",
            sp->dec_names);
    if ((rv = rsp_saml_decrypt_id(&got, &unwraps, p,
                                  rsp_saml_decryption_keys(sp), sp->dec_names,
                                  &shape, check, detail)) != APR_SUCCESS) {
        *detail = apr_psprintf(p, "%s: %s", where, *detail);
        goto done;
    }
    /* In place of the EncryptedID, as Lasso would have put it
     * (lasso_saml20_profile_process_name_identifier_decryption). */
    nid = LASSO_SAML2_NAME_ID(lasso_saml2_name_id_new_with_string(
        (char *)got.value));
    if (!nid) {
        REFUSE("lasso", "cannot make a Lasso NameID");
    }
    lasso_assign_string(nid->Format, got.format);
    lasso_assign_string(nid->NameQualifier, got.name_qualifier);
    lasso_assign_string(nid->SPNameQualifier, got.sp_name_qualifier);
    lasso_assign_string(nid->SPProvidedID, got.sp_provided_id);
    *name_id = nid;
    lasso_release_gobject(*encrypted);

done:
    if (doc) {
        xmlFreeDoc(doc);
    }
    return rv;
}
