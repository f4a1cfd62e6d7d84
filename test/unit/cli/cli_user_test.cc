// `corral user …` against a canned corrald: the keys `user add` reads and
// sends, how it says to log in once the change is applied, `user remove` and
// the user table.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cli/user_cmd.h"
#include "support/cli_test_support.h"

namespace corral {
namespace {

class CliUserTest : public FakeCorraldTest {
 protected:
  // Writes `text` to `<home>/.ssh/<name>` and returns its path.
  std::string writeKeyFile(const std::string& name, const std::string& text) {
    std::filesystem::create_directories(home_.path() + "/.ssh");
    std::string path = home_.path() + "/.ssh/" + name;
    std::ofstream(path) << text;
    return path;
  }
};

TEST_F(CliUserTest, AddSendsTheKeysWaitsAndSaysHowToLogIn) {
  writeKeyFile("alice.pub", "# laptop\nssh-ed25519 AAAA alice@laptop\n");
  std::string desk = writeKeyFile("desk.pub",
                                  "ssh-ed25519 BBBB alice@desk\n"
                                  "ssh-ed25519 AAAA alice@laptop\n");
  serve("POST", "/api/v1/clusters/demo/users", 202,
        changeAccepted(4, "add login user alice", runningCluster("demo")));
  serveChangeOutcome("demo", runningCluster("demo"), 4);
  CliResult r =
      run({"user", "add", "demo", "alice", "--ssh-key=~/.ssh/alice.pub", "--ssh-key", desk});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(requests_.lines(),
            std::vector<std::string>{
                R"(POST /api/v1/clusters/demo/users {"name":"alice","sshKeys":)"
                R"(["ssh-ed25519 AAAA alice@laptop","ssh-ed25519 BBBB alice@desk"]})"});
  EXPECT_EQ(r.out,
            "revision 4: add login user alice\n"
            "revision 4 applied\n"
            "alice can log in with: ssh -i " +
                home_.path() + "/.ssh/alice alice@172.29.1.3\n");
  EXPECT_EQ(r.err, "");
}

TEST_F(CliUserTest, AddAsJsonPrintsTheRevisionAndTheLoginLineForPeople) {
  std::string key = writeKeyFile("bob.pub", "ssh-ed25519 CCCC bob@host\n");
  serve("POST", "/api/v1/clusters/demo/users", 202,
        changeAccepted(4, "add login user bob", runningCluster("demo")));
  serveChangeOutcome("demo", runningCluster("demo"), 4);
  CliResult r = run({"user", "add", "demo", "bob", "--ssh-key", key, "-o", "json"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out), revisionsWith(4, "Applied")["revisions"][0]);
  EXPECT_EQ(r.err,
            "revision 4: add login user bob\n"
            "revision 4 applied\n"
            "bob can log in with: ssh -i " +
                home_.path() + "/.ssh/bob bob@172.29.1.3\n");
}

TEST_F(CliUserTest, AddWithNoWaitReturnsOnceAccepted) {
  std::string key = writeKeyFile("bob.pub", "ssh-ed25519 CCCC bob@host\n");
  serve("POST", "/api/v1/clusters/demo/users", 202,
        changeAccepted(4, "add login user bob", runningCluster("demo")));
  CliResult r = run({"user", "add", "demo", "bob", "--ssh-key", key, "--no-wait"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "revision 4: add login user bob\n"
            "revision 4 requested; follow it with: corral cluster history demo\n");
  EXPECT_EQ(revisionPolls_, 0);
}

TEST_F(CliUserTest, AddNeedsAReadablePublicKeyBeforeSendingAnything) {
  CliResult r = run({"user", "add", "demo", "alice"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind("--ssh-key is required\n", 0), 0u) << r.err;

  r = run({"user", "add", "demo", "alice", "--ssh-key", home_.path() + "/missing.pub"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: cannot read SSH key file " + home_.path() +
                       "/missing.pub: No such file or directory\n");

  std::string priv = writeKeyFile("id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\nx\n");
  r = run({"user", "add", "demo", "alice", "--ssh-key", priv});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: " + priv + " holds a private key; pass the public key instead (" + priv +
                       ".pub)\n");
  EXPECT_TRUE(requests_.lines().empty());
}

TEST_F(CliUserTest, AddOfAnExistingUserPassesCorraldsReasonThrough) {
  std::string key = writeKeyFile("alice.pub", "ssh-ed25519 AAAA alice@laptop\n");
  corrald_.server().Post("/api/v1/clusters/demo/users",
                         [](const httplib::Request&, httplib::Response& res) {
                           replyError(res, 409, "Conflict", "user \"alice\" already exists");
                         });
  CliResult r = run({"user", "add", "demo", "alice", "--ssh-key", key});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "error: user \"alice\" already exists\n");
}

TEST(CliUserPureTest, LoginCommandUsesThePrivateKeyAndThePort) {
  Json cluster = runningCluster("demo");
  EXPECT_EQ(userLoginCommand(cluster, "alice", "/home/me/.ssh/id_ed25519.pub"),
            "ssh -i /home/me/.ssh/id_ed25519 alice@172.29.1.3");
  // Not a .pub file: there is no private key to name, so ssh picks one.
  EXPECT_EQ(userLoginCommand(cluster, "alice", "/home/me/keys.txt"), "ssh alice@172.29.1.3");
  cluster["login"]["port"] = 2222;
  EXPECT_EQ(userLoginCommand(cluster, "alice", "/k.pub"), "ssh -i /k -p 2222 alice@172.29.1.3");
  cluster["login"]["address"] = "";
  EXPECT_EQ(userLoginCommand(cluster, "alice", "/k.pub"), "");
}

TEST_F(CliUserTest, AddSaysWhenTheLoginNodeHasNoAddressYet) {
  std::string key = writeKeyFile("alice.pub", "ssh-ed25519 AAAA alice@laptop\n");
  Json cluster = runningCluster("demo");
  cluster["login"]["address"] = "";
  serve("POST", "/api/v1/clusters/demo/users", 202,
        changeAccepted(4, "add login user alice", cluster));
  serveChangeOutcome("demo", cluster, 4);
  CliResult r = run({"user", "add", "demo", "alice", "--ssh-key", key});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "revision 4: add login user alice\n"
            "revision 4 applied\n"
            "alice can log in once the login node has an address; see: corral cluster get "
            "demo\n");
}

TEST_F(CliUserTest, RemoveDeletesTheUserAndWaits) {
  serve("DELETE", "/api/v1/clusters/demo/users/alice", 202,
        changeAccepted(5, "remove login user alice", runningCluster("demo")));
  serveChangeOutcome("demo", runningCluster("demo"), 5);
  CliResult r = run({"user", "remove", "demo", "alice"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(requests_.lines(),
            std::vector<std::string>{"DELETE /api/v1/clusters/demo/users/alice"});
  EXPECT_EQ(r.out, "revision 5: remove login user alice\nrevision 5 applied\n");
}

TEST_F(CliUserTest, RemoveOfAnUnknownUserPassesTheErrorThrough) {
  corrald_.server().Delete(
      "/api/v1/clusters/demo/users/carol", [](const httplib::Request&, httplib::Response& res) {
        replyError(res, 404, "NotFound", "cluster \"demo\" has no login user \"carol\"");
      });
  CliResult r = run({"user", "remove", "demo", "carol", "--no-wait"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: cluster \"demo\" has no login user \"carol\"\n");
}

TEST_F(CliUserTest, ListShowsUidHomeAndKeyCount) {
  Json body = {{"users",
                {{{"name", "alice"}, {"uid", 2001}, {"home", "/shared/home/alice"}, {"sshKeys", 2}},
                 {{"name", "bob"}, {"uid", 2002}, {"home", "/shared/home/bob"}, {"sshKeys", 1}}}}};
  serve("GET", "/api/v1/clusters/demo/users", 200, body);
  CliResult r = run({"user", "list", "demo"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "NAME    UID    HOME                 KEYS\n"
            "alice   2001   /shared/home/alice   2\n"
            "bob     2002   /shared/home/bob     1\n");
  r = run({"user", "list", "demo", "-o", "json"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out), body);
}

TEST(CliUserPureTest, ListWithoutUsersSaysHowToAddOne) {
  EXPECT_EQ(userListTable(Json{{"users", Json::array()}}, "demo"),
            "No login users on demo; add one with: corral user add demo NAME --ssh-key FILE\n");
}

TEST_F(CliUserTest, BareAndUnknownUserCommandsNameTheChoices) {
  CliResult r = run({"user"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "error: \"corral user\" needs a command: add, remove, list; see: corral user "
            "--help\n");
  r = run({"user", "delete", "demo", "alice"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "error: unknown command \"corral user delete\"; the commands are: add, remove, "
            "list\n");
}

}  // namespace
}  // namespace corral
