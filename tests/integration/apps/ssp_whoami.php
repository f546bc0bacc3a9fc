<?php
/* A page of the application beside SimpleSAMLphp: the NameID of the
 * session its cookies name (200), or 401. */
require_once('/usr/share/simplesamlphp/lib/_autoload.php');
header('Content-Type: text/plain');
$as = new \SimpleSAML\Auth\Simple('default-sp');
if (!$as->isAuthenticated()) {
    http_response_code(401);
    echo "no session\n";
    exit;
}
echo $as->getAuthData('saml:sp:NameID')->getValue() . "\n";
