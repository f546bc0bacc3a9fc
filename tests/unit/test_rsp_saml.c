/* Unit tests for the SAML files on messages the test IdP really signed:
 * the response path (rsp_saml_process_response: rsp_saml_response.c,
 * rsp_saml_shape.c), the IdP's LogoutRequests, our answers to them and
 * our AuthnRequests (rsp_saml_messages.c), the SP's metadata and the
 * IdP's keys (rsp_saml_metadata.c, rsp_saml.c).
 *
 * main() runs make_saml_cases.py, which makes an SP key pair, an IdP, one
 * response and one logout query per case (the attacks made from signed
 * messages, changed afterwards as an attacker would) into a mkdtemp
 * directory; the SP is loaded as the module loads it and every case is
 * checked against it: accepted with the identity the signature covers,
 * or refused with its exact check= name.
 *
 * Responses: the XML-signature-wrapping family (an evil assertion
 * before, after or inside the signed one, the signed one moved into
 * Extensions or into a Signature's Object, two assertions with one ID), a
 * comment splitting the signed NameID, DOCTYPE (an internal entity; an
 * external DTD, which must never be fetched: a listener here sees whether
 * anything connects), two and zero assertions, another key, a broken
 * signature, and the checks after the signatures. Encrypted assertions
 * (unsigned Response: decrypted before any signature is checked): what
 * the plaintext may be (one saml:Assertion, the size, element, attribute
 * and depth limits, at and past each), a CipherReference (never fetched).
 * Any Response: the attributes of one element, the depth. LogoutRequests:
 * RSA-SHA256 and -SHA512 taken, RSA-SHA1 (not allowed here), tampered,
 * unsigned, another key and no SAMLRequest refused. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "rsp_unit.h"
#include <apr_file_io.h>
#include <apr_general.h>
#include <apr_strings.h>

#include "rsp_saml.h"
#include "rsp_saml_shape.h"

#ifndef RSP_SRCDIR
#define RSP_SRCDIR "."
#endif

#define SP_ENTITY "https://sp.unit.example/saml"   /* make_saml_cases.py */
#define ACS_URL SP_ENTITY "/acs"

static char dir[] = "/tmp/rsp-saml-XXXXXX";
static int dtd_fd = -1;
static apr_pool_t *root;
static rsp_saml_sp_t sp;
static rsp_lasso_server_t *server;

typedef struct {
    const char *name;
    const char *check;    /* NULL: accepted */
    const char *name_id;  /* when accepted */
} case_t;

static const case_t cases[] = {
    {"good-both-signed", NULL, "alice"},
    {"good-assertion-signed", NULL, "alice"},
    {"good-response-signed", NULL, "alice"},
    {"unsigned", "signature", NULL},
    {"another-key", "signature", NULL},
    {"broken-signature", "signature", NULL},
    {"two-assertions", "assertion-count", NULL},
    {"zero-assertions", "assertion-count", NULL},
    {"xsw-evil-before", "assertion-count", NULL},
    {"xsw-evil-after", "assertion-count", NULL},
    {"xsw-evil-inside", "assertion-count", NULL},
    {"xsw-signed-in-extensions", "signature", NULL},
    {"xsw-signed-in-object", "signature", NULL},
    {"xsw-duplicate-id", "assertion-count", NULL},
    {"nameid-comment", NULL, "alice.admin@example.org"},
    {"doctype-entity", "xml", NULL},
    {"doctype-external", "xml", NULL},
    {"wrong-audience", "audience", NULL},
    {"wrong-destination", "destination", NULL},
    {"expired", "expired", NULL},
    {"window-too-long", "window-too-long", NULL},
    /* EncryptedAssertion in an unsigned Response: decrypted before any
     * signature is checked, so what comes out is checked first */
    {"enc-good", NULL, "alice"},
    {"enc-good-response-signed", NULL, "alice"},
    {"enc-whitespace-around", NULL, "alice"},
    {"enc-another-key", "decrypt", NULL},
    {"enc-cipher-reference", "encryption", NULL},
    {"enc-deep-18000", "xml-depth", NULL},
    {"enc-deep-over", "xml-depth", NULL},
    {"enc-deep-at-limit", NULL, "alice"},
    {"enc-size-at-limit", NULL, "alice"},
    {"enc-size-over", "decrypted-size", NULL},
    {"enc-size-large", "decrypted-size", NULL},
    {"enc-many-elements", "decrypted-size", NULL},
    {"enc-many-attributes", "decrypted-size", NULL},
    {"enc-two-genuine-first", "assertion-count", NULL},
    {"enc-two-genuine-second", "assertion-count", NULL},
    {"enc-other-element-after", "assertion-count", NULL},
    {"enc-not-an-assertion", "assertion-count", NULL},
    {"enc-comment-after", "assertion-count", NULL},
    {"enc-text-after", "assertion-count", NULL},
    /* any Response, before it is parsed */
    {"response-many-attributes", "xml", NULL},
    {"response-deep-over", "xml-depth", NULL},
    {"response-deep-at-limit", NULL, "alice"},
};
#define NCASES ((int)(sizeof(cases) / sizeof(cases[0])))

static const char *read_case(apr_pool_t *p, const char *name)
{
    const char *path = apr_psprintf(p, "%s/cases/%s.b64", dir, name);
    apr_file_t *f;
    apr_finfo_t fi;
    apr_size_t n;
    char *buf;

    ck_assert_msg(apr_file_open(&f, path, APR_FOPEN_READ, 0, p) == APR_SUCCESS,
                  "no fixture %s", path);
    ck_assert_int_eq(apr_file_info_get(&fi, APR_FINFO_SIZE, f), APR_SUCCESS);
    buf = apr_palloc(p, (apr_size_t)fi.size + 1);
    ck_assert_int_eq(apr_file_read_full(f, buf, (apr_size_t)fi.size, &n),
                     APR_SUCCESS);
    buf[n] = '\0';
    apr_file_close(f);
    return buf;
}

static apr_status_t process(const char *b64, rsp_assertion_t **a,
                            const char **check, const char **detail)
{
    rsp_check_params_t cp;

    memset(&cp, 0, sizeof(cp));
    cp.sp = &sp;
    cp.entity_id = SP_ENTITY;
    cp.acs_url = ACS_URL;
    cp.now = apr_time_now();
    cp.skew_s = 180;
    cp.max_window_s = 3600;
    *a = NULL;
    *check = *detail = NULL;
    return rsp_saml_process_response(a, pool, server, b64, &cp, check, detail);
}

START_TEST(test_case)
{
    const case_t *c = &cases[_i];
    rsp_assertion_t *a;
    const char *check, *detail;
    apr_status_t rv = process(read_case(pool, c->name), &a, &check, &detail);

    if (!c->check) {
        ck_assert_msg(rv == APR_SUCCESS, "%s: refused, check=%s: %s", c->name,
                      check ? check : "?", detail ? detail : "?");
        ck_assert_ptr_nonnull(a);
        /* the whole signed value, whatever splits its text */
        ck_assert_str_eq(a->name_id, c->name_id);
        ck_assert_str_eq(a->issuer, "https://idp.unit.example/idp");
        ck_assert(a->ttl_ms > 0);
    }
    else {
        ck_assert_msg(rv != APR_SUCCESS, "%s: accepted (user %s), expected "
                      "check=%s", c->name, a && a->name_id ? a->name_id : "?",
                      c->check);
        ck_assert_msg(check && !strcmp(check, c->check),
                      "%s: check=%s (%s), expected check=%s", c->name,
                      check ? check : "(none)", detail ? detail : "", c->check);
        ck_assert_msg(detail && *detail, "%s: no detail", c->name);
    }
}
END_TEST

/* The external DTD was never asked for: nothing connected to the port
 * the fixture names. */
START_TEST(test_external_dtd_never_fetched)
{
    rsp_assertion_t *a;
    const char *check, *detail;
    struct pollfd pfd;

    ck_assert_int_ne(process(read_case(pool, "doctype-external"), &a, &check,
                             &detail), APR_SUCCESS);
    pfd.fd = dtd_fd;
    pfd.events = POLLIN;
    pfd.revents = 0;
    ck_assert_int_eq(poll(&pfd, 1, 200), 0);
}
END_TEST

/* xmlsec fetches a CipherReference's URI while it decrypts: the
 * Response is refused before, and nothing connected to the port the
 * fixture names (the same listener as the DTD's). */
START_TEST(test_cipher_reference_never_fetched)
{
    rsp_assertion_t *a;
    const char *check, *detail;
    struct pollfd pfd;

    ck_assert_int_ne(process(read_case(pool, "enc-cipher-reference"), &a,
                             &check, &detail), APR_SUCCESS);
    ck_assert_str_eq(check, "encryption");
    pfd.fd = dtd_fd;
    pfd.events = POLLIN;
    pfd.revents = 0;
    ck_assert_int_eq(poll(&pfd, 1, 200), 0);
}
END_TEST

/* What a decryption may yield (rsp_saml_plaintext_shape), as text: the
 * scan's reading of tags, and each refusal with its check=. */
typedef struct {
    const char *what;
    const char *text;
    const char *check;    /* NULL: accepted */
} plaintext_case_t;

#define A_OPEN "<saml:Assertion xmlns:saml=\"urn:oasis:names:tc:SAML:2.0:assertion\" ID=\"_a1\">"
#define A_CLOSE "</saml:Assertion>"
#define A(inner) A_OPEN inner A_CLOSE

static const plaintext_case_t plaintext_cases[] = {
    {"bare", A(""), NULL},
    {"whitespace around", " \r\n\t" A("") "\n", NULL},
    {"'>' and '<' where they are no tags",
     A("<x a='>' b=\"/>\"><!-- <y> --><![CDATA[<z>]]><?pi <w>?>&lt;</x>"), NULL},
    {"default namespace",
     "<Assertion xmlns=\"urn:oasis:names:tc:SAML:2.0:assertion\"/>", NULL},
    {"empty", "", "assertion-count"},
    {"whitespace only", " \n", "assertion-count"},
    {"two", A("") A(""), "assertion-count"},
    {"another element after", A("") "<x/>", "assertion-count"},
    {"another element before", "<x/>" A(""), "assertion-count"},
    {"not an assertion", "<x/>", "assertion-count"},
    {"another namespace", "<saml:Assertion xmlns:saml=\"urn:other\"/>",
     "assertion-count"},
    {"prefix not declared", "<saml:Assertion/>", "assertion-count"},
    {"text after", A("") "x", "assertion-count"},
    {"byte order mark", "\xef\xbb\xbf" A(""), "assertion-count"},
    {"comment before", "<!-- c -->" A(""), "assertion-count"},
    {"CDATA after", A("") "<![CDATA[x]]>", "assertion-count"},
    {"XML declaration", "<?xml version=\"1.0\"?>" A(""), "assertion-count"},
    {"DOCTYPE", "<!DOCTYPE x>" A(""), "xml"},
    {"DOCTYPE inside", A("<!DOCTYPE x>"), "xml"},
    {"not closed", A_OPEN, "xml"},
    {"end tag without start", A("</x>"), "xml"},
    {"comment not closed", A("<!-- x"), "xml"},
    {"value not closed", A("<x a=\"1/>"), "xml"},
    {"'<' in a tag", A("<x <y/>"), "xml"},
    {"'<' last", A("") "<", "xml"},
    {"'<' in a value", A("<x a=\"<\"/>"), "xml"},
    {"undeclared entity", A("&x;"), "xml"},
};
#define NPLAINTEXT ((int)(sizeof(plaintext_cases) / sizeof(plaintext_cases[0])))

START_TEST(test_plaintext)
{
    const plaintext_case_t *c = &plaintext_cases[_i];
    const char *check = "unset", *id = NULL;
    const char *why = rsp_saml_plaintext_shape(pool, c->text, strlen(c->text),
                                               &id, &check);

    if (!c->check) {
        ck_assert_msg(!why, "%s: refused, check=%s: %s", c->what, check, why);
        ck_assert_ptr_null(check);
    }
    else {
        ck_assert_msg(why && *why, "%s: accepted, expected check=%s", c->what,
                      c->check);
        ck_assert_msg(check && !strcmp(check, c->check),
                      "%s: check=%s (%s), expected check=%s", c->what,
                      check ? check : "(none)", why, c->check);
    }
}
END_TEST

/* A NUL byte (the text is given with its length) */
START_TEST(test_plaintext_nul)
{
    static const char text[] = A("x\0y");
    const char *check = NULL, *id = NULL;

    ck_assert_ptr_nonnull(rsp_saml_plaintext_shape(pool, text, sizeof(text) - 1,
                                                   &id, &check));
    ck_assert_str_eq(check, "xml");
}
END_TEST

/* Each limit: at it accepted, one past it refused with its check=. */
static const char *repeat(apr_pool_t *p, const char *s, int n)
{
    apr_size_t len = strlen(s);
    char *out = apr_palloc(p, len * (apr_size_t)n + 1);
    int i;

    for (i = 0; i < n; i++) {
        memcpy(out + len * (apr_size_t)i, s, len);
    }
    out[len * (apr_size_t)n] = '\0';
    return out;
}

static const char *limit_check(const char *text)
{
    const char *check = NULL, *id = NULL;

    return rsp_saml_plaintext_shape(pool, text, strlen(text), &id, &check)
        ? check : NULL;
}

START_TEST(test_plaintext_limits)
{
    const char *at, *over, *check = NULL, *id = NULL;
    apr_size_t pad;
    int n;

    /* depth: the Assertion is level 1 */
    n = RSP_DECRYPTED_MAX_DEPTH - 1;
    at = apr_pstrcat(pool, A_OPEN, repeat(pool, "<x>", n),
                     repeat(pool, "</x>", n), A_CLOSE, NULL);
    over = apr_pstrcat(pool, A_OPEN, repeat(pool, "<x>", n + 1),
                       repeat(pool, "</x>", n + 1), A_CLOSE, NULL);
    ck_assert_ptr_null(limit_check(at));
    ck_assert_str_eq(limit_check(over), "xml-depth");
    /* refused at the first level too deep, whatever follows */
    ck_assert_str_eq(limit_check(apr_pstrcat(pool, A_OPEN,
                                             repeat(pool, "<x>", 18000), NULL)),
                     "xml-depth");
    /* elements, the Assertion included */
    n = RSP_DECRYPTED_MAX_ELEMENTS - 1;
    ck_assert_ptr_null(limit_check(apr_pstrcat(
        pool, A_OPEN, repeat(pool, "<x/>", n), A_CLOSE, NULL)));
    ck_assert_str_eq(limit_check(apr_pstrcat(
        pool, A_OPEN, repeat(pool, "<x/>", n + 1), A_CLOSE, NULL)),
        "decrypted-size");
    /* attributes of one element (an '=' in a value is none) */
    at = apr_pstrcat(pool, A_OPEN, "<x", NULL);
    for (n = 0; n < RSP_DECRYPTED_MAX_ATTRIBUTES; n++) {
        at = apr_psprintf(pool, "%s a%d='='", at, n);
    }
    over = apr_pstrcat(pool, at, " b='1'/>", A_CLOSE, NULL);
    at = apr_pstrcat(pool, at, "/>", A_CLOSE, NULL);
    ck_assert_ptr_null(limit_check(at));
    ck_assert_str_eq(limit_check(over), "decrypted-size");
    /* bytes: whitespace after the Assertion up to the limit */
    pad = RSP_DECRYPTED_MAX_SIZE - strlen(A(""));
    at = apr_pstrcat(pool, A(""), repeat(pool, " ", (int)pad), NULL);
    over = apr_pstrcat(pool, at, " ", NULL);
    ck_assert_ptr_null(limit_check(at));
    ck_assert_str_eq(limit_check(over), "decrypted-size");
    /* the ID of what is accepted */
    ck_assert_ptr_null(rsp_saml_plaintext_shape(pool, A(""), strlen(A("")),
                                                &id, &check));
    ck_assert_str_eq(id, "_a1");
}
END_TEST

/* The same response is the same verdict: a case run twice. */
START_TEST(test_verdicts_are_stable)
{
    rsp_assertion_t *a;
    const char *check, *detail;
    const char *good = read_case(pool, "good-both-signed");
    const char *bad = read_case(pool, "xsw-evil-before");
    int i;

    for (i = 0; i < 3; i++) {
        ck_assert_int_eq(process(good, &a, &check, &detail), APR_SUCCESS);
        ck_assert_int_ne(process(bad, &a, &check, &detail), APR_SUCCESS);
        ck_assert_str_eq(check, "assertion-count");
    }
}
END_TEST

/* ---- the IdP's LogoutRequests (HTTP-Redirect, signature checked by
 * the module itself) ---- */

typedef struct {
    const char *name;
    const char *check;    /* NULL: taken */
} logout_case_t;

static const logout_case_t logout_cases[] = {
    {"good", NULL},
    {"good-sha512", NULL},
    {"sha1", "signature"},          /* ReplaySPAllowSHA1 not given */
    {"tampered", "signature"},
    {"unsigned", "signature"},
    {"another-key", "signature"},
    {"no-saml-request", "binding"},
    {"many-attributes", "xml"},     /* before its signature is looked at */
};
#define NLOGOUT ((int)(sizeof(logout_cases) / sizeof(logout_cases[0])))

static const char *read_logout(apr_pool_t *p, const char *name)
{
    const char *path = apr_psprintf(p, "%s/logout/%s.txt", dir, name);
    apr_file_t *f;
    char *buf = apr_palloc(p, 65536);
    apr_size_t n = 65535;

    ck_assert_msg(apr_file_open(&f, path, APR_FOPEN_READ, 0, p) == APR_SUCCESS,
                  "no fixture %s", path);
    apr_file_read(f, buf, &n);
    buf[n] = '\0';
    apr_file_close(f);
    return buf;
}

START_TEST(test_logout_request)
{
    const logout_case_t *c = &logout_cases[_i];
    rsp_logout_request_t req;
    rsp_slo_t *slo = NULL;
    const char *check = NULL, *detail = NULL, *url = NULL, *err = NULL;
    apr_status_t rv;

    memset(&req, 0, sizeof(req));
    rv = rsp_saml_logout_request_in(&slo, pool, server, &sp,
                                    read_logout(pool, c->name), &req, &check,
                                    &detail);
    if (!c->check) {
        ck_assert_msg(rv == APR_SUCCESS, "%s: refused, check=%s: %s", c->name,
                      check ? check : "?", detail ? detail : "?");
        ck_assert_str_eq(req.issuer, "https://idp.unit.example/idp");
        ck_assert_str_eq(req.name_id, "alice");
        ck_assert_int_eq(req.session_indexes->nelts, 1);
        ck_assert_str_eq(APR_ARRAY_IDX(req.session_indexes, 0, const char *),
                         "_s1");
        ck_assert_ptr_null(req.weak_signature);
        /* the answer: a signed LogoutResponse back to the IdP */
        ck_assert_msg(rsp_saml_logout_answer(slo, pool, &req, &url, &err)
                      == APR_SUCCESS, "answer: %s", err ? err : "?");
        ck_assert_ptr_nonnull(strstr(url, "SAMLResponse="));
        ck_assert_ptr_nonnull(strstr(url, "&Signature="));
        ck_assert_ptr_nonnull(strstr(url, "RelayState=%2Fbye"));
    }
    else {
        ck_assert_msg(rv != APR_SUCCESS, "%s: taken, expected check=%s",
                      c->name, c->check);
        ck_assert_msg(check && !strcmp(check, c->check),
                      "%s: check=%s (%s), expected check=%s", c->name,
                      check ? check : "(none)", detail ? detail : "", c->check);
    }
    if (slo) {
        rsp_saml_slo_free(slo, pool);
    }
}
END_TEST

/* ---- what the SP sends and publishes ---- */

START_TEST(test_authn_request)
{
    const char *url = NULL, *id = NULL, *err = NULL;

    ck_assert_msg(rsp_saml_authn_request(pool, server,
                                         "https://idp.unit.example/idp",
                                         ACS_URL, "token-1", &url, &id, &err)
                  == APR_SUCCESS, "AuthnRequest: %s", err ? err : "?");
    /* to the IdP's SingleSignOnService, the RelayState as given, unsigned
     * (the IdP's metadata does not ask for signed requests) */
    ck_assert_msg(!strncmp(url, "http://127.0.0.1/idp/sso?", 25), "url %s", url);
    ck_assert_ptr_nonnull(strstr(url, "SAMLRequest="));
    ck_assert_ptr_nonnull(strstr(url, "RelayState=token-1"));
    ck_assert_ptr_null(strstr(url, "Signature="));
    ck_assert(id && id[0] == '_' && strlen(id) >= 16);
    /* an IdP this SP does not know */
    ck_assert_int_ne(rsp_saml_authn_request(pool, server,
                                            "https://unknown.example/idp",
                                            ACS_URL, "t", &url, &id, &err),
                     APR_SUCCESS);
}
END_TEST

START_TEST(test_metadata)
{
    const char *md = rsp_saml_metadata(pool, &sp, SP_ENTITY);

    ck_assert_ptr_nonnull(strstr(md, "entityID=\"" SP_ENTITY "\""));
    ck_assert_ptr_nonnull(strstr(md, "Location=\"" SP_ENTITY "/acs\""));
    ck_assert_ptr_nonnull(strstr(md, "Location=\"" SP_ENTITY "/slo\""));
    ck_assert_ptr_nonnull(strstr(md, "WantAssertionsSigned=\"true\""));
    ck_assert_ptr_nonnull(strstr(md, "<md:KeyDescriptor use=\"signing\">"));
    ck_assert_ptr_nonnull(strstr(md, "<md:KeyDescriptor use=\"encryption\">"));
    ck_assert_ptr_nonnull(strstr(md, "aes256-gcm"));
    ck_assert_ptr_null(strstr(md, "rsa-1_5"));
    /* names are escaped */
    md = rsp_saml_metadata(pool, &sp, "https://sp.example/a&b<\"");
    ck_assert_ptr_nonnull(strstr(md, "https://sp.example/a&amp;b&lt;&quot;/acs"));
    /* the IdP's signing key, taken from its metadata */
    ck_assert_int_eq(sp.idp_keys->nelts, 1);
    ck_assert_int_eq(APR_ARRAY_IDX(sp.idp_keys, 0, apr_array_header_t *)->nelts,
                     1);
}
END_TEST

static Suite *saml_suite(void)
{
    Suite *s = suite_create("rsp_saml");
    /* one test case per file: rsp_saml_response.c (and rsp_saml_shape.c),
     * rsp_saml_messages.c, rsp_saml_metadata.c */
    TCase *tc = tcase_create("responses");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_case, 0, NCASES);
    tcase_add_test(tc, test_external_dtd_never_fetched);
    tcase_add_test(tc, test_verdicts_are_stable);
    tcase_add_test(tc, test_cipher_reference_never_fetched);
    tcase_add_loop_test(tc, test_plaintext, 0, NPLAINTEXT);
    tcase_add_test(tc, test_plaintext_nul);
    tcase_add_test(tc, test_plaintext_limits);
    suite_add_tcase(s, tc);

    tc = tcase_create("messages");
    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_logout_request, 0, NLOGOUT);
    tcase_add_test(tc, test_authn_request);
    suite_add_tcase(s, tc);

    tc = tcase_create("metadata");
    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_metadata);
    suite_add_tcase(s, tc);
    return s;
}

/* A listening loopback socket (never accepted on): the external DTD's
 * address. */
static int dtd_listener(int *port)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0
        || listen(fd, 4) != 0
        || getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        perror("listener");
        return -1;
    }
    *port = ntohs(sa.sin_port);
    return fd;
}

/* make_saml_cases.py DIR PORT, bounded by its own work (a few seconds). */
static int make_cases(int port)
{
    char portbuf[16];
    pid_t pid;
    int status = 0;

    snprintf(portbuf, sizeof(portbuf), "%d", port);
    pid = fork();
    if (pid == 0) {
        execl("/usr/bin/python3", "python3",
              RSP_SRCDIR "/tests/unit/make_saml_cases.py", dir, portbuf,
              (char *)NULL);
        perror("exec /usr/bin/python3");
        _exit(127);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)
        || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "make_saml_cases.py failed (status %d)\n", status);
        return -1;
    }
    return 0;
}

static void remove_tree(const char *d)
{
    pid_t pid = fork();
    int status;

    if (pid == 0) {
        execl("/bin/rm", "rm", "-rf", d, (char *)NULL);
        _exit(127);
    }
    if (pid > 0) {
        waitpid(pid, &status, 0);
    }
}

/* The SP's pool, at exit: also in the forked test processes, which never
 * return here (what the pool holds the key objects through is memory
 * LeakSanitizer does not scan: APR maps it). */
static void release_root(void)
{
    if (root) {
        apr_pool_destroy(root);
        root = NULL;
    }
}

int main(void)
{
    const char *err = NULL;
    rsp_sp_input_t input;
    int port = 0, rc = 99;

    if (!mkdtemp(dir) || (dtd_fd = dtd_listener(&port)) < 0
        || make_cases(port) != 0) {
        fprintf(stderr, "cannot make the SAML fixtures in %s\n", dir);
        return 99;
    }
    apr_initialize();
    apr_pool_create(&root, NULL);
    atexit(release_root);
    if (rsp_saml_global_init(&err) != APR_SUCCESS) {
        fprintf(stderr, "Lasso: %s\n", err);
        return 99;
    }
    rsp_saml_log_install();   /* Lasso's messages to our log (dropped) */
    memset(&sp, 0, sizeof(sp));
    sp.entity_id = SP_ENTITY;
    sp.key_file = apr_pstrcat(root, dir, "/sp.key", NULL);
    sp.cert_file = apr_pstrcat(root, dir, "/sp.crt", NULL);
    sp.idp_files = apr_array_make(root, 1, sizeof(const char *));
    APR_ARRAY_PUSH(sp.idp_files, const char *) =
        apr_pstrcat(root, dir, "/idp-metadata.xml", NULL);
    sp.enc_publish = -1;
    if (rsp_saml_sp_load(&sp, root, &input, &err) != APR_SUCCESS
        || rsp_saml_server_new(&server, &sp, &err) != APR_SUCCESS) {
        fprintf(stderr, "cannot load the SP of %s: %s\n", dir, err);
    }
    else {
        rc = rsp_unit_run(saml_suite());
        rsp_saml_server_free(server);
    }
    close(dtd_fd);
    if (rc == 0) {
        remove_tree(dir);
    }
    else {
        fprintf(stderr, "fixtures kept in %s\n", dir);
    }
    release_root();
    apr_terminate();
    return rc;
}
