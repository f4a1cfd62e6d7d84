// What `corral` makes of its command line and local files before it talks to
// corrald: URLs, request bodies, SSH keys, ssh's argv and shell quoting.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "cli/client.h"
#include "cli/cluster_cmd.h"
#include "cli/ssh_cmd.h"
#include "cli/ssh_keys.h"
#include "support/cli_test_support.h"

namespace corral {
namespace {

namespace fs = std::filesystem;

void writeFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

int modeOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return -1;
  return static_cast<int>(st.st_mode & 07777);
}

// ---- --server ----

TEST(CliArgsTest, ParseServerUrlAcceptsTheUsualForms) {
  auto u = parseServerUrl("http://127.0.0.1:8470");
  ASSERT_TRUE(u.isOk());
  EXPECT_EQ(u->scheme, "http");
  EXPECT_EQ(u->host, "127.0.0.1");
  EXPECT_EQ(u->port, 8470);
  EXPECT_EQ(u->toString(), "http://127.0.0.1:8470");

  u = parseServerUrl("localhost:9000/");
  ASSERT_TRUE(u.isOk());
  EXPECT_EQ(u->toString(), "http://localhost:9000");

  u = parseServerUrl("HTTPS://corral.example");
  ASSERT_TRUE(u.isOk());
  EXPECT_EQ(u->toString(), "https://corral.example:443");

  u = parseServerUrl("http://[::1]:8470");
  ASSERT_TRUE(u.isOk());
  EXPECT_EQ(u->host, "[::1]");
  EXPECT_EQ(u->port, 8470);
}

TEST(CliArgsTest, ParseServerUrlRejectsWhatItCannotUse) {
  for (const char* bad : {"", "ftp://x:1", "http://", "http://host:", "http://host:abc",
                          "http://host:0", "http://host:70000", "http://host:8470/api",
                          "http://user@host", "http://[::1", "http://[::1]x"}) {
    auto u = parseServerUrl(bad);
    EXPECT_FALSE(u.isOk()) << bad;
    if (!u.isOk()) {
      EXPECT_EQ(u.status().code(), Code::kInvalidArgument);
      EXPECT_NE(u.status().message().find("expected http://HOST:PORT"), std::string::npos);
    }
  }
}

TEST(CliArgsTest, EncodePathSegmentKeepsNamesAndEscapesTheRest) {
  EXPECT_EQ(percentEncode("demo-1.a_b~"), "demo-1.a_b~");
  EXPECT_EQ(percentEncode("../x y/%"), "..%2Fx%20y%2F%25");
}

// ---- answers ----

TEST(CliArgsTest, InterpretAnswerReturnsBodyOn2xx) {
  auto r = interpretAnswer(201, R"({"name":"demo"})");
  ASSERT_TRUE(r.isOk());
  EXPECT_EQ((*r)["name"], "demo");
}

TEST(CliArgsTest, InterpretAnswerUsesTheApiErrorMessage) {
  auto r = interpretAnswer(
      409, R"({"error":{"code":"Conflict","message":"cluster \"demo\" already exists"}})");
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), Code::kConflict);
  EXPECT_EQ(r.status().message(), "cluster \"demo\" already exists");

  r = interpretAnswer(404, R"({"error":{"code":"Weird","message":"gone"}})");
  EXPECT_EQ(r.status().code(), Code::kNotFound);
  EXPECT_EQ(r.status().message(), "gone");
}

TEST(CliArgsTest, InterpretAnswerDescribesNonApiAnswers) {
  auto r = interpretAnswer(502, "<html>\nBad gateway</html>");
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().message(), "corrald answered HTTP 502: <html> Bad gateway</html>");
  r = interpretAnswer(200, "not json");
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), Code::kInternal);
  EXPECT_NE(r.status().message().find("not JSON"), std::string::npos);
  r = interpretAnswer(503, "");
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
  EXPECT_EQ(r.status().message(), "corrald answered HTTP 503");
}

// ---- cluster create ----

TEST(CliArgsTest, BuildCreateRequestSendsCountsAsGiven) {
  CreateOptions o;
  o.name = "demo";
  o.gpuNodes = -3;
  o.gpusPerNode = 1000;
  o.cpuNodes = 2;
  Json body = buildCreateRequest(o, {"ssh-ed25519 AAAA a", "ssh-rsa BBBB b"});
  EXPECT_EQ(body.dump(), R"({"name":"demo","gpuNodes":-3,"gpusPerNode":1000,"cpuNodes":2,)"
                         R"("sshKeys":["ssh-ed25519 AAAA a","ssh-rsa BBBB b"]})");
}

TEST(CliArgsTest, CreateDefaultsComeFromSpec) {
  CreateOptions o;
  EXPECT_EQ(o.gpuNodes, 4);
  EXPECT_EQ(o.gpusPerNode, 8);
  EXPECT_EQ(o.cpuNodes, 0);
  EXPECT_EQ(o.timeoutSeconds, 600);
}

TEST(CliArgsTest, ParsePublicKeysSkipsBlankLinesAndComments) {
  auto keys = parsePublicKeys(
      "# my keys\n\nssh-ed25519 AAAA one@host\r\n   \n  ssh-rsa BBBB two@host  \n#x\n", "f.pub");
  ASSERT_TRUE(keys.isOk());
  EXPECT_EQ(*keys,
            (std::vector<std::string>{"ssh-ed25519 AAAA one@host", "ssh-rsa BBBB two@host"}));
}

TEST(CliArgsTest, ParsePublicKeysRefusesPrivateKeysAndEmptyFiles) {
  auto r = parsePublicKeys("-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n", "/h/.ssh/id_ed25519");
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("/h/.ssh/id_ed25519 holds a private key"), std::string::npos);
  r = parsePublicKeys("# nothing\n\n", "empty.pub");
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("empty.pub holds no SSH public key"), std::string::npos);
}

TEST(CliArgsTest, ReadPublicKeyFileNamesAnUnreadableFile) {
  TempDir dir;
  auto r = readPublicKeyFile(dir.path() + "/missing.pub");
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().message(),
            "cannot read SSH key file " + dir.path() + "/missing.pub: No such file or directory");
  r = readPublicKeyFile(dir.path());
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("is a directory"), std::string::npos);
}

TEST(CliArgsTest, CollectSshKeysReadsEveryFileInOrderWithoutDuplicates) {
  TempDir dir;
  writeFile(dir.path() + "/a.pub", "ssh-ed25519 AAAA a\nssh-rsa BBBB b\n");
  writeFile(dir.path() + "/b.pub", "ssh-rsa BBBB b\nssh-ed25519 CCCC c\n");
  std::ostringstream err;
  auto keys = collectSshKeys({dir.path() + "/a.pub", "~/b.pub"}, dir.path(), err);
  ASSERT_TRUE(keys.isOk()) << keys.status().message();
  EXPECT_EQ(*keys, (std::vector<std::string>{"ssh-ed25519 AAAA a", "ssh-rsa BBBB b",
                                             "ssh-ed25519 CCCC c"}));
}

TEST(CliArgsTest, ExpandHome) {
  EXPECT_EQ(expandHome("~/.ssh/x.pub", "/home/u"), "/home/u/.ssh/x.pub");
  EXPECT_EQ(expandHome("~", "/home/u"), "/home/u");
  EXPECT_EQ(expandHome("/abs/~/x", "/home/u"), "/abs/~/x");
  EXPECT_EQ(expandHome("~other/x", "/home/u"), "~other/x");
}

TEST(CliArgsTest, CorralPublicKeysCreatesTheKeyPairOnce) {
  if (::access("/usr/bin/ssh-keygen", X_OK) != 0) GTEST_SKIP() << "no ssh-keygen";
  TempDir home;
  std::ostringstream err;
  auto keys = corralPublicKeys(home.path(), err);
  ASSERT_TRUE(keys.isOk()) << keys.status().message();
  ASSERT_EQ(keys->size(), 1u);
  EXPECT_EQ(keys->front().rfind("ssh-ed25519 ", 0), 0u);
  EXPECT_EQ(keys->front().substr(keys->front().size() - 7), " corral");
  EXPECT_EQ(modeOf(home.path() + "/.ssh"), 0700);
  EXPECT_EQ(modeOf(home.path() + "/.ssh/corral_ed25519"), 0600);
  EXPECT_NE(err.str().find("created SSH key"), std::string::npos);

  // The second time it reuses the key and says nothing.
  std::ostringstream err2;
  auto again = corralPublicKeys(home.path(), err2);
  ASSERT_TRUE(again.isOk());
  EXPECT_EQ(*again, *keys);
  EXPECT_EQ(err2.str(), "");
}

TEST(CliArgsTest, CorralPublicKeysWillNotOverwriteALonePrivateKey) {
  TempDir home;
  fs::create_directory(home.path() + "/.ssh");
  writeFile(home.path() + "/.ssh/corral_ed25519", "secret");
  std::ostringstream err;
  auto keys = corralPublicKeys(home.path(), err);
  ASSERT_FALSE(keys.isOk());
  EXPECT_NE(keys.status().message().find("ssh-keygen -y -f"), std::string::npos);
  std::ifstream in(home.path() + "/.ssh/corral_ed25519");
  std::string content;
  in >> content;
  EXPECT_EQ(content, "secret");
}

// ---- ssh ----

TEST(CliArgsTest, ShellQuote) {
  EXPECT_EQ(shellQuote("ls"), "'ls'");
  EXPECT_EQ(shellQuote(""), "''");
  EXPECT_EQ(shellQuote("echo $HOSTNAME"), "'echo $HOSTNAME'");
  EXPECT_EQ(shellQuote("it's"), "'it'\\''s'");
}

// Runs `words` through what the remote side does: ssh joins them with spaces
// and a POSIX shell parses the result.
std::string throughRemoteShell(const std::vector<std::string>& argv) {
  std::string joined;
  for (const auto& a : argv) joined += (joined.empty() ? "" : " ") + shellQuote(a);
  std::string cmd = "HOSTNAME=login-node /bin/sh -c " + shellQuote(joined);
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return "<popen failed>";
  std::string out;
  char buf[256];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

TEST(CliArgsTest, QuotedArgumentsReachTheRemoteShellIntact) {
  EXPECT_EQ(throughRemoteShell({"sh", "-c", "echo $HOSTNAME"}), "login-node\n");
  EXPECT_EQ(throughRemoteShell({"printf", "[%s]\\n", "a b", "", "it's", "*", "$(id)", "x\"y"}),
            "[a b]\n[]\n[it's]\n[*]\n[$(id)]\n[x\"y]\n");
}

TEST(CliArgsTest, KnownHostsLine) {
  EXPECT_EQ(knownHostsLine("172.29.1.3", 22, "ssh-ed25519 AAAA"), "172.29.1.3 ssh-ed25519 AAAA");
  EXPECT_EQ(knownHostsLine("172.29.1.3", 2222, "ssh-ed25519 AAAA"),
            "[172.29.1.3]:2222 ssh-ed25519 AAAA");
}

Json runningCluster() {
  return Json::parse(R"({"name": "demo", "status": "Running",
      "login": {"address": "172.29.1.3", "port": 22, "hostKey": "ssh-ed25519 AAAA"}})");
}

TEST(CliArgsTest, BuildSshArgvForACommandWithoutATerminal) {
  SshArgvOptions o{"/h/.cache/corral/known_hosts-demo", "/h/.ssh/corral_ed25519", false};
  auto argv = buildSshArgv(runningCluster(), {"sh", "-c", "echo $HOSTNAME"}, o);
  ASSERT_TRUE(argv.isOk());
  EXPECT_EQ(*argv, (std::vector<std::string>{
                       "ssh", "-o", "UserKnownHostsFile=/h/.cache/corral/known_hosts-demo", "-o",
                       "StrictHostKeyChecking=yes", "-o", "LogLevel=ERROR", "-o", "BatchMode=yes",
                       "-i", "/h/.ssh/corral_ed25519", "--", "root@172.29.1.3", "'sh'", "'-c'",
                       "'echo $HOSTNAME'"}));
}

TEST(CliArgsTest, BuildSshArgvForAnInteractiveShell) {
  Json c = runningCluster();
  c["login"]["port"] = 2200;
  SshArgvOptions o{"/home/a b/kh", "", true};
  auto argv = buildSshArgv(c, {}, o);
  ASSERT_TRUE(argv.isOk());
  EXPECT_EQ(*argv, (std::vector<std::string>{"ssh", "-o", "UserKnownHostsFile=\"/home/a b/kh\"",
                                             "-o", "StrictHostKeyChecking=yes", "-o",
                                             "LogLevel=ERROR", "-o", "BatchMode=no", "-t", "-p",
                                             "2200", "--", "root@172.29.1.3"}));
}

TEST(CliArgsTest, BuildSshArgvWithATerminalAndACommandHasNoDashT) {
  auto argv = buildSshArgv(runningCluster(), {"sinfo"}, {"/kh", "", true});
  ASSERT_TRUE(argv.isOk());
  EXPECT_EQ(std::count(argv->begin(), argv->end(), "-t"), 0);
  EXPECT_EQ(argv->back(), "sinfo");
}

TEST(CliArgsTest, BuildSshArgvPassesOneArgumentAsACommandLine) {
  auto argv = buildSshArgv(runningCluster(), {"sinfo; squeue"}, {"/kh", "", false});
  ASSERT_TRUE(argv.isOk());
  EXPECT_EQ(argv->back(), "sinfo; squeue");
}

TEST(CliArgsTest, BuildSshArgvQuotesEachWordOfSeveral) {
  auto argv = buildSshArgv(runningCluster(), {"sh", "-c", "echo $HOSTNAME"}, {"/kh", "", false});
  ASSERT_TRUE(argv.isOk());
  EXPECT_EQ(argv->back(), "'echo $HOSTNAME'");
}

TEST(CliArgsTest, BuildSshArgvNeedsALoginAddress) {
  Json c = runningCluster();
  c["login"]["address"] = "";
  EXPECT_FALSE(buildSshArgv(c, {}, {"/kh", "", false}).isOk());
}

TEST(CliArgsTest, WritePrivateFileCreatesDirsAndMode0600) {
  TempDir home;
  std::string path = home.path() + "/.cache/corral/known_hosts-demo";
  ASSERT_TRUE(writePrivateFile(path, "a\n").isOk());
  EXPECT_EQ(modeOf(path), 0600);
  EXPECT_EQ(modeOf(home.path() + "/.cache/corral"), 0700);
  // A wider leftover is replaced, content and mode.
  ::chmod(path.c_str(), 0644);
  ASSERT_TRUE(writePrivateFile(path, "b\n").isOk());
  EXPECT_EQ(modeOf(path), 0600);
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "b");
}

// ---- whole command lines that never reach a server ----

CliResult run(std::vector<std::string> args, const std::string& home = "/nonexistent") {
  FakeCliClock clock;
  CliContext ctx;
  ctx.clock = &clock;
  ctx.home = home;
  ctx.exec = [](const std::vector<std::string>&) { return internalError("exec in a test"); };
  return runCorral(std::move(args), ctx);
}

TEST(CliArgsTest, UsageErrorsExitTwo) {
  // Port 9 on 127.0.0.1 is never contacted: each of these fails in parsing.
  const std::string s = "--server=http://127.0.0.1:9";
  for (const auto& args : std::vector<std::vector<std::string>>{
           {},
           {"cluster"},
           {"bogus"},
           {s, "cluster", "create"},
           {s, "cluster", "create", "demo", "--gpu-nodes", "abc"},
           {s, "cluster", "create", "demo", "--gpus-per-node", "1.5"},
           {s, "cluster", "create", "demo", "--timeout", "0"},
           {s, "cluster", "get", ""},
           {s, "cluster", "list", "-o", "yaml"},
           {"--server", "ftp://x", "cluster", "list"},
           {s, "ssh", "demo", "ls", "-la"},
       }) {
    CliResult c = run(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(c.code, 2) << joined << c.err;
    EXPECT_EQ(c.out, "") << joined;
    EXPECT_NE(c.err, "") << joined;
  }
}

TEST(CliArgsTest, HelpAndVersionExitZero) {
  CliResult c = run({"--help"});
  EXPECT_EQ(c.code, 0);
  EXPECT_NE(c.out.find("cluster"), std::string::npos);
  c = run({"version"});
  EXPECT_EQ(c.code, 0);
  EXPECT_EQ(c.out, "corral 0.1.0\n");
  c = run({"cluster", "create", "--help"});
  EXPECT_EQ(c.code, 0);
  EXPECT_NE(c.out.find("--gpu-nodes INT=4"), std::string::npos);
}

TEST(CliArgsTest, WaitAndNoWaitAreAcceptedEverywhere) {
  // Nothing listens on port 9: a command that parses fails to connect (1),
  // one that does not parse is a usage error (2).
  const std::string s = "--server=http://127.0.0.1:9";
  for (const auto& args : std::vector<std::vector<std::string>>{
           {s, "cluster", "create", "demo", "--no-wait"},
           {s, "cluster", "delete", "demo", "--no-wait"},
           {s, "cluster", "terminate", "demo", "--no-wait"},
           {s, "cluster", "clone", "demo", "copy", "--no-wait"},
           {s, "cluster", "scale", "demo", "--gpu-nodes", "2", "--wait"},
           {s, "config", "set", "demo", "MaxJobCount=5000", "--wait"},
           {s, "node", "reboot", "demo", "slinky-0", "--wait"},
           {s, "cluster", "delete", "demo", "--wait"}}) {
    CliResult c = run(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(c.code, 1) << joined << c.err;
    EXPECT_EQ(c.err.find("requires"), std::string::npos) << joined << c.err;
  }
}

TEST(CliArgsTest, SshIdentityMustBeAFileAndIsCheckedFirst) {
  CliResult c = run({"--server", "http://127.0.0.1:9", "ssh", "demo", "-i", "/nonexistent/key"});
  EXPECT_EQ(c.code, 1);
  EXPECT_EQ(c.err, "error: -i /nonexistent/key: no such key file\n");
}

TEST(CliArgsTest, UnreadableKeyFileFailsBeforeAnyRequest) {
  // Nothing listens on the server URL; the error must be about the file.
  CliResult c = run({"--server", "http://127.0.0.1:9", "cluster", "create", "demo", "--ssh-key",
                     "/nonexistent/key.pub"});
  EXPECT_EQ(c.code, 1);
  EXPECT_EQ(c.err,
            "error: cannot read SSH key file /nonexistent/key.pub: No such file or directory\n");
}

}  // namespace
}  // namespace corral
