// Login users (docs/api.md, "Login users"): people who ssh to the login
// node as themselves, with a home on /shared. Adding and removing one is a
// change; the rules (unique names, uids never given twice) are
// src/model/spec_edits.h's.

#include "api/http_util.h"
#include "api/server.h"
#include "model/spec_edits.h"

namespace corral {

using nlohmann::json;

void ApiServer::listLoginUsers(const httplib::Request& req, httplib::Response& res) {
  auto r = findCluster(req.matches[1]);
  if (!r.isOk()) return sendError(res, r.status());
  json list = json::array();
  for (const auto& u : r->spec.users)
    list.push_back({{"name", u.name},
                    {"uid", u.uid},
                    {"home", "/shared/home/" + u.name},
                    {"sshKeys", u.sshKeys.size()}});
  sendJson(res, 200, {{"users", list}});
}

void ApiServer::createLoginUser(const httplib::Request& req, httplib::Response& res) {
  std::string name = req.matches[1];
  auto body = jsonBody(req, {"name", "sshKeys"});
  if (!body.isOk()) return sendError(res, body.status());
  LoginUser user;
  if (!body->contains("name") || !(*body)["name"].is_string())
    return sendError(res, invalidArgument("field \"name\" (the user's login name) is required"));
  user.name = (*body)["name"];
  if (Status s = readStrings(*body, "sshKeys", &user.sshKeys); !s.isOk()) return sendError(res, s);
  auto nextUid = [&] { return store_.nextSequence("login-uid/" + name); };
  auto after = change(name, Action::kUsers, "add login user " + user.name, false, false,
                      [&](ClusterSpec& spec) { return addLoginUser(spec, user, nextUid); });
  answerChange(res, name, after);
}

void ApiServer::deleteLoginUser(const httplib::Request& req, httplib::Response& res) {
  removeNamed(req, res, Action::kUsers, "remove login user", removeLoginUser);
}

}  // namespace corral
