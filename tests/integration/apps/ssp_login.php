<?php
/* A page of the application beside SimpleSAMLphp that requires a session:
 * without one, SimpleSAMLphp sends the browser to the IdP with its
 * AuthnRequest (its state kept in its store); with one, the NameID. */
require_once('/usr/share/simplesamlphp/lib/_autoload.php');
header('Content-Type: text/plain');
$as = new \SimpleSAML\Auth\Simple('default-sp');
$as->requireAuth();
echo $as->getAuthData('saml:sp:NameID')->getValue() . "\n";
