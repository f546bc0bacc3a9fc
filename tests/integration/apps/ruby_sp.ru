# An application SP: a Rack application with ruby-saml (Debian's
# ruby-saml), its assertion consumer a route of the app, run under puma
# behind ProxyPass by test_guard_apps.py (see apps.py). The same routes,
# configuration and log as flask_sp.py:
#
# * POST /sso/acs: the response checked by ruby-saml against the
#   configured public ACS URL, IdP certificate and entity IDs; accepted (and
#   its assertion ID not seen by this instance before): the user in the
#   session cookie (app_session), 302 to the RelayState (a local path) or
#   /app/; refused: 400.
# * GET /app/whoami: the session's user (200) or 401.
#
# Its log (one JSON object a line, the file RSP_APP_CONFIG names): every
# request to the ACS as received, before anything is parsed, and every
# answer of the ACS as it leaves.

require "digest"
require "json"
require "rack"
require "onelogin/ruby-saml"

# The configuration, the log and the replay cache of this instance.
module RubySp
  CONFIG = JSON.parse(File.read(ENV.fetch("RSP_APP_CONFIG")))
  LOCK = Mutex.new
  SEEN = {} # assertion IDs this instance accepted

  def self.log(entry)
    entry = entry.merge("app" => CONFIG["name"], "pid" => Process.pid)
    LOCK.synchronize do
      File.open(CONFIG["log"], "a") { |f| f.write(JSON.generate(entry) + "\n") }
    end
  end

  # true the first time this instance sees the assertion ID
  def self.first_use?(id)
    LOCK.synchronize { SEEN[id] ? false : (SEEN[id] = true) }
  end

  def self.settings
    s = OneLogin::RubySaml::Settings.new
    s.sp_entity_id = CONFIG["sp_entity_id"]
    s.assertion_consumer_service_url = CONFIG["acs_url"]
    s.idp_entity_id = CONFIG["idp_entity_id"]
    s.idp_sso_service_url = CONFIG["idp_sso_url"]
    s.idp_cert = CONFIG["idp_cert"]
    s.security[:want_assertions_signed] = true
    s
  end
end

# Logs what reached the ACS (before any parsing) and what it answered.
class AcsLog
  def initialize(app)
    @app = app
  end

  def call(env)
    return @app.call(env) unless env["PATH_INFO"] == "/sso/acs"

    input = env["rack.input"]
    raw = input ? input.read : ""
    input&.rewind
    RubySp.log("event" => "received", "method" => env["REQUEST_METHOD"],
            "path" => env["PATH_INFO"], "query" => env["QUERY_STRING"].to_s,
            "content_length" => env["CONTENT_LENGTH"],
            "transfer_encoding" => env["HTTP_TRANSFER_ENCODING"],
            "content_type" => env["CONTENT_TYPE"],
            "body" => raw.force_encoding("BINARY").encode("UTF-8", "ISO-8859-1"))
    status, headers, body = @app.call(env)
    chunks = []
    body.each { |c| chunks << c }
    body.close if body.respond_to?(:close)
    text = chunks.join
    cookies = headers["Set-Cookie"].to_s.split("\n")
    RubySp.log("event" => "answered", "status" => status.to_i, "location" => headers["Location"],
            "set_cookie" => cookies, "body_sha256" => Digest::SHA256.hexdigest(text))
    [status, headers, [text]]
  end
end

# The application: its assertion consumer and one protected page.
class App
  def call(env)
    req = Rack::Request.new(env)
    case [req.request_method, req.path_info]
    when ["POST", "/sso/acs"] then acs(req)
    when ["GET", "/app/whoami"] then whoami(req)
    when ["GET", "/"] then [200, { "Content-Type" => "text/plain" }, ["ruby sp\n"]]
    else [404, { "Content-Type" => "text/plain" }, ["not found\n"]]
    end
  end

  def acs(req)
    response = OneLogin::RubySaml::Response.new(req.POST["SAMLResponse"].to_s,
                                                settings: RubySp.settings)
    unless response.is_valid?
      return [400, { "Content-Type" => "text/plain" }, ["refused: #{response.errors.join('; ')}\n"]]
    end

    unless RubySp.first_use?(response.assertion_id)
      return [400, { "Content-Type" => "text/plain" }, ["refused: assertion already used\n"]]
    end

    req.session["user"] = response.nameid
    relay = req.POST["RelayState"].to_s
    relay = "/app/" unless relay.start_with?("/") && !relay.start_with?("//")
    [302, { "Location" => relay, "Content-Type" => "text/plain" }, [""]]
  end

  def whoami(req)
    user = req.session["user"]
    return [401, { "Content-Type" => "text/plain" }, ["no session\n"]] unless user

    [200, { "Content-Type" => "text/plain" }, ["#{user}\n"]]
  end
end

use AcsLog
use Rack::Session::Cookie, key: "app_session", secret: RubySp::CONFIG["secret"], path: "/",
                           httponly: true
run App.new
