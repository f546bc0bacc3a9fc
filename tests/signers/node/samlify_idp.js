#!/usr/bin/env node
// A test IdP built on samlify (signatures: xml-crypto; encryption:
// @authenio/xml-encryption): no Lasso, no xmlsec1, no libxml2 on the
// signing side. Long-running: one JSON request per line on stdin, one JSON
// answer per line on stdout, in order; it exits when stdin closes.
//
//   {"op": "metadata", "entity_id", "key_file", "cert_file", "sso_url"}
//       -> {"ok": true, "metadata": "<EntityDescriptor ...>"}
//   {"op": "mint", "entity_id", "key_file", "cert_file", "sso_url",
//    "sp_metadata": "<the SP's metadata as it serves it>",
//    "sign": "response" | "assertion" | "both",
//    "data": null | "aes128-gcm" | "aes256-gcm" | "aes128-cbc" | "aes256-cbc",
//    "key": "rsa-oaep-mgf1p" | "rsa-1_5",
//    "response_id", "assertion_id", "name_id", "issue_instant", "not_before",
//    "not_on_or_after", "scd_not_on_or_after", "session_index",
//    "in_response_to" (or null), "attributes": {name: value},
//    "encrypt_then_sign": true unless false (samlify's own default, false,
//    signs the Response before the assertion is encrypted),
//    markup switches applied to the template before samlify signs it:
//    "prefixes": null | "saml2" (saml2p:/saml2: instead of samlp:/saml:),
//    "issuer_format": true adds Format="...:entity" to both Issuers,
//    "name_id_format" (default unspecified), "session_not_on_or_after"
//    (or null: none on the AuthnStatement)}
//       -> {"ok": true, "b64": "<base64 SAMLResponse>"}
//   {"op": "encrypt", "xml": "<an element>", "recipient_cert_file",
//    "data", "key"}: the element encrypted by samlify's encryption library
//    (@authenio/xml-encryption, as samlify calls it)
//       -> {"ok": true, "encrypted": "<xenc:EncryptedData ...>"}
//   any failure -> {"ok": false, "error": "..."}
//
// Everything SAML is samlify's: its IdentityProvider (metadata, signing
// and encryption settings), its ServiceProvider read from the SP's own
// metadata, its default login response template (with samlify's own
// attribute statement builder), createLoginResponse over HTTP-POST. Which
// elements get signed is samlify's rule: the assertion when the SP's
// metadata says WantAssertionsSigned="true", the Response when the SP
// wants signed messages (or does not want signed assertions), so the
// SP's metadata is passed with WantAssertionsSigned set for the shape.
// encryptThenSign is true unless asked otherwise: without it samlify
// signs the Response before the assertion is encrypted, and that signature
// no longer covers what is sent.
'use strict';

// stdout carries the answers only: anything a library prints goes to stderr.
console.log = console.info = console.warn = console.error;

const crypto = require('crypto');
const fs = require('fs');
const readline = require('readline');
const saml = require('samlify');
const xmlenc = require('@authenio/xml-encryption');

const NS = 'http://www.w3.org/2001/04/xmlenc#';
const DATA = {
  'aes128-gcm': 'http://www.w3.org/2009/xmlenc11#aes128-gcm',
  'aes256-gcm': 'http://www.w3.org/2009/xmlenc11#aes256-gcm',
  'aes128-cbc': NS + 'aes128-cbc',
  'aes256-cbc': NS + 'aes256-cbc',
};
const KEY = { 'rsa-oaep-mgf1p': NS + 'rsa-oaep-mgf1p', 'rsa-1_5': NS + 'rsa-1_5' };
const REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
const UNSPECIFIED = 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified';
const ENTITY = 'urn:oasis:names:tc:SAML:2.0:nameid-format:entity';
const AUTHN_STATEMENT =
  '<saml:AuthnStatement AuthnInstant="{AuthnInstant}" SessionIndex="{SessionIndex}"' +
  '{SessionNotOnOrAfter}>' +
  '<saml:AuthnContext><saml:AuthnContextClassRef>' +
  'urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport' +
  '</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>';

const idps = new Map();   // one samlify IdentityProvider per (files, encryption)

function identityProvider(req) {
  const data = req.data || null;
  const key = req.key || 'rsa-oaep-mgf1p';
  if (data !== null && !DATA[data]) throw new Error('unknown data algorithm ' + data);
  if (!KEY[key]) throw new Error('unknown key transport ' + key);
  const k = JSON.stringify([req.entity_id, req.key_file, req.cert_file, req.sso_url, data, key]);
  if (!idps.has(k)) {
    const settings = {
      entityID: req.entity_id,
      privateKey: fs.readFileSync(req.key_file),
      signingCert: fs.readFileSync(req.cert_file),
      nameIDFormat: [UNSPECIFIED],
      singleSignOnService: [{ Binding: REDIRECT, Location: req.sso_url }],
      requestSignatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
      isAssertionEncrypted: data !== null,
    };
    if (data !== null) {
      settings.dataEncryptionAlgorithm = DATA[data];
      settings.keyEncryptionAlgorithm = KEY[key];
    }
    idps.set(k, saml.IdentityProvider(settings));
  }
  return idps.get(k);
}

function serviceProvider(req) {
  const sign = req.sign;
  if (!['response', 'assertion', 'both'].includes(sign)) throw new Error('sign: ' + sign);
  const md = String(req.sp_metadata).replace(/WantAssertionsSigned="(true|false)"/,
    'WantAssertionsSigned="' + (sign === 'response' ? 'false' : 'true') + '"');
  return saml.ServiceProvider({ metadata: md, wantMessageSigned: sign !== 'assertion' });
}

async function mint(req) {
  const idp = identityProvider(req);
  const sp = serviceProvider(req);
  const names = Object.keys(req.attributes || {});
  const attrs = names.map((name, i) => ({
    name, nameFormat: 'urn:oasis:names:tc:SAML:2.0:attrname-format:basic',
    valueTag: 'a' + i, valueXsiType: 'xs:string',
  }));
  const values = {
    ID: req.response_id,
    AssertionID: req.assertion_id,
    Destination: sp.entityMeta.getAssertionConsumerService('post'),
    Audience: sp.entityMeta.getEntityID(),
    SubjectRecipient: sp.entityMeta.getAssertionConsumerService('post'),
    Issuer: idp.entityMeta.getEntityID(),
    IssueInstant: req.issue_instant,
    StatusCode: 'urn:oasis:names:tc:SAML:2.0:status:Success',
    ConditionsNotBefore: req.not_before,
    ConditionsNotOnOrAfter: req.not_on_or_after,
    SubjectConfirmationDataNotOnOrAfter: req.scd_not_on_or_after,
    NameIDFormat: req.name_id_format || UNSPECIFIED,
    NameID: req.name_id,
    InResponseTo: req.in_response_to || null,   // null: the attribute left out
    AuthnInstant: req.issue_instant,
    SessionIndex: req.session_index,
  };
  names.forEach((name, i) => { values['attrA' + i] = String(req.attributes[name]); });
  const r = await idp.createLoginResponse(sp, null, 'post', { email: req.name_id }, {
    encryptThenSign: req.encrypt_then_sign !== false,
    customTagReplacement: (template) => {
      let t = template.replace('{AuthnStatement}', AUTHN_STATEMENT.replace(
        '{SessionNotOnOrAfter}', req.session_not_on_or_after
          ? ' SessionNotOnOrAfter="' + req.session_not_on_or_after + '"' : ''));
      t = t.replace('{AttributeStatement}',
        attrs.length ? saml.SamlLib.attributeStatementBuilder(attrs) : '');
      if (req.issuer_format) t = t.split('<saml:Issuer>').join('<saml:Issuer Format="' + ENTITY + '">');
      if (req.prefixes === 'saml2') {
        t = t.replace(/(<\/?|xmlns:)samlp:?/g, (m) => m.replace('samlp', 'saml2p'))
          .replace(/(<\/?|xmlns:)saml(?=[:=])/g, '$1saml2');
      } else if (req.prefixes) {
        throw new Error('prefixes: ' + req.prefixes);
      }
      return { id: req.response_id, context: saml.SamlLib.replaceTagsByValue(t, values) };
    },
  });
  return { b64: r.context };
}

function encrypt(req) {
  if (!DATA[req.data]) throw new Error('unknown data algorithm ' + req.data);
  if (!KEY[req.key]) throw new Error('unknown key transport ' + req.key);
  const pem = fs.readFileSync(req.recipient_cert_file);
  const options = {
    rsa_pub: crypto.createPublicKey(pem).export({ type: 'spki', format: 'pem' }),
    pem, encryptionAlgorithm: DATA[req.data], keyEncryptionAlgorithm: KEY[req.key],
  };
  return new Promise((resolve, reject) => {
    xmlenc.encrypt(req.xml, options, (err, res) => (err ? reject(err) : resolve({ encrypted: res })));
  });
}

async function handle(line) {
  const req = JSON.parse(line);
  if (req.op === 'metadata') return { metadata: identityProvider(req).getMetadata() };
  if (req.op === 'mint') return mint(req);
  if (req.op === 'encrypt') return encrypt(req);
  throw new Error('unknown op ' + req.op);
}

// Answers go out in the order the requests came in.
let chain = Promise.resolve();
const rl = readline.createInterface({ input: process.stdin, terminal: false });
rl.on('line', (line) => {
  if (!line.trim()) return;
  chain = chain.then(() => handle(line))
    .then((out) => Object.assign({ ok: true }, out),
      (err) => ({ ok: false, error: String((err && err.stack) || err) }))
    .then((out) => { process.stdout.write(JSON.stringify(out) + '\n'); });
});
rl.on('close', () => { chain.then(() => process.exit(0)); });
