<?php
/* Prepended to every PHP request of a SimpleSAMLphp replica in the guard's
 * tests (php_admin_value auto_prepend_file): the backend's own record of
 * what reached PHP and what it answered, one JSON object a line, in the
 * file RSP_SSP_LOG names (the same shape as apps/flask_sp.py's log).
 * Only requests to the assertion consumer (saml2-acs.php) are logged. */

if (strpos($_SERVER['REQUEST_URI'] ?? '', '/saml2-acs.php') !== false) {
    $rsp_log = function (array $entry) {
        $entry['app'] = getenv('RSP_REPLICA') ?: '?';
        $entry['pid'] = getmypid();
        file_put_contents(getenv('RSP_SSP_LOG'), json_encode($entry, JSON_UNESCAPED_SLASHES) . "\n",
                          FILE_APPEND | LOCK_EX);
    };
    $rsp_uri = $_SERVER['REQUEST_URI'];
    $rsp_q = strpos($rsp_uri, '?');
    $rsp_log([
        'event' => 'received',
        'method' => $_SERVER['REQUEST_METHOD'],
        'path' => $rsp_q === false ? $rsp_uri : substr($rsp_uri, 0, $rsp_q),
        'query' => $_SERVER['QUERY_STRING'] ?? '',
        'content_length' => $_SERVER['CONTENT_LENGTH'] ?? null,
        'transfer_encoding' => $_SERVER['HTTP_TRANSFER_ENCODING'] ?? null,
        'content_type' => $_SERVER['CONTENT_TYPE'] ?? null,
        'body_b64' => base64_encode(file_get_contents('php://input')),
    ]);
    register_shutdown_function(function () use ($rsp_log) {
        $location = null;
        $cookies = [];
        foreach (headers_list() as $h) {
            list($name, $value) = array_map('trim', explode(':', $h, 2));
            if (strcasecmp($name, 'Location') == 0) {
                $location = $value;
            } elseif (strcasecmp($name, 'Set-Cookie') == 0) {
                $cookies[] = $value;
            }
        }
        $rsp_log(['event' => 'answered', 'status' => http_response_code(),
                  'location' => $location, 'set_cookie' => $cookies, 'body_sha256' => null]);
    });
}
