// Round trips of whole `corral` commands against a canned corrald: a real
// httplib::Server on 127.0.0.1, port 0, answering from per-test handlers.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/client.h"
#include "cli/http.h"
#include "support/cli_test_support.h"

namespace corral {
namespace {

namespace fs = std::filesystem;

Json cluster(const std::string& status, const std::string& phase = "",
             const std::string& reason = "") {
  Json c = Json::parse(R"({"name": "demo", "status": "", "phase": "", "reason": "",
      "revision": 1, "appliedRevision": 1,
      "spec": {"name": "demo", "gpuNodes": 2, "gpusPerNode": 8, "cpuNodes": 0, "sshKeys": ["k"]},
      "subnet": "172.29.1.0/24",
      "login": {"address": "172.29.1.3", "port": 22, "hostKey": "ssh-ed25519 HOSTKEY"},
      "nodes": [{"name": "slinky-0", "group": "slinky", "physicalId": "corral_node_1",
                 "address": "172.29.1.10", "gpus": 8, "state": "idle"}],
      "createdAt": 1764464400, "updatedAt": 1764464405})");
  c["status"] = status;
  c["phase"] = phase;
  c["reason"] = reason;
  return c;
}

class CliClientTest : public FakeCorraldTest {
 protected:
  // Records what `corral ssh` would exec instead of running it.
  CliContext context() override {
    CliContext ctx = FakeCorraldTest::context();
    ctx.stdinIsTty = stdinIsTty_;
    ctx.exec = [this](const std::vector<std::string>& argv) {
      execed_ = argv;
      return Status::ok();
    };
    return ctx;
  }

  std::string writeKeyFile(const std::string& name, const std::string& text) {
    std::string path = home_.path() + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  bool stdinIsTty_ = false;
  std::vector<std::string> execed_;
};

TEST_F(CliClientTest, ListAsTableAndAsJson) {
  std::string body = Json{{"clusters", Json::array({cluster("Running")})}}.dump();
  corrald_.server().Get("/api/v1/clusters", [&](const httplib::Request&, httplib::Response& res) {
    reply(res, 200, body);
  });
  CliResult r = run({"cluster", "list"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "NAME   STATUS    IMAGE   GPU-NODES   CPU-NODES   LOGIN        AGE\n"
            "demo   Running   -       2           0           172.29.1.3   1m\n");
  r = run({"cluster", "list", "-o", "json"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, Json::parse(body).dump(2) + "\n");
  // Key order is the server's, not alphabetical.
  EXPECT_LT(r.out.find("\"status\""), r.out.find("\"phase\""));
}

TEST_F(CliClientTest, GetShowsNodesTheWayTheConsoleDoes) {
  corrald_.server().Get("/api/v1/clusters/demo",
                        [&](const httplib::Request&, httplib::Response& res) {
                          reply(res, 200, cluster("Running").dump());
                        });
  CliResult r = run({"cluster", "get", "demo"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Status:     Running\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Login:      ssh root@172.29.1.3"), std::string::npos);
  EXPECT_NE(r.out.find("NODE       PHYSICAL-ID                GROUP    GPUS   STATE   ADDRESS\n"
                       "slinky-0   corral_node_1 (slinky-0)   slinky   8      idle    "
                       "172.29.1.10\n"),
            std::string::npos)
      << r.out;
  r = run({"cluster", "get", "demo", "-o", "json"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(Json::parse(r.out), cluster("Running"));
}

TEST_F(CliClientTest, ApiErrorPrintsTheMessageAndExitsOne) {
  corrald_.server().Get(
      R"(/api/v1/clusters/([^/]+))", [&](const httplib::Request& req, httplib::Response& res) {
        replyError(res, 404, "NotFound", "cluster \"" + req.matches[1].str() + "\" not found");
      });
  CliResult r = run({"cluster", "get", "nope"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "error: cluster \"nope\" not found\n");
}

TEST_F(CliClientTest, NamesAreOnePathSegment) {
  std::string seen;
  corrald_.server().Get(R"(/api/v1/clusters/(.*))",
                        [&](const httplib::Request& req, httplib::Response& res) {
                          seen = req.matches[1].str();
                          replyError(res, 404, "NotFound", "no");
                        });
  CliResult r = run({"cluster", "get", "a/../b c"});
  EXPECT_EQ(r.code, 1);
  // httplib's server decodes the path; what matters is that it arrived whole.
  EXPECT_EQ(seen, "a/../b c");
}

TEST_F(CliClientTest, CreateSendsTheRequestAndSaysHowToFollow) {
  Json received;
  corrald_.server().Post("/api/v1/clusters",
                         [&](const httplib::Request& req, httplib::Response& res) {
                           received = Json::parse(req.body);
                           EXPECT_EQ(req.get_header_value("Content-Type"), "application/json");
                           reply(res, 201, cluster("Creating", "allocating").dump());
                         });
  std::string k1 = writeKeyFile("a.pub", "# laptop\nssh-ed25519 AAAA me@laptop\n\n");
  std::string k2 = writeKeyFile("b.pub", "ssh-rsa BBBB me@desk\n");
  CliResult r = run({"cluster", "create", "demo", "--gpu-nodes", "16", "--gpus-per-node", "4",
                     "--cpu-nodes", "-1", "--ssh-key", k1, "--ssh-key", k2});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "cluster \"demo\" is being created; follow it with: corral cluster get demo\n");
  EXPECT_EQ(received.dump(), R"({"name":"demo","gpuNodes":16,"gpusPerNode":4,"cpuNodes":-1,)"
                             R"("sshKeys":["ssh-ed25519 AAAA me@laptop","ssh-rsa BBBB me@desk"]})");
}

TEST_F(CliClientTest, CreateWithoutSshKeyUsesCorralsOwnKey) {
  if (::access("/usr/bin/ssh-keygen", X_OK) != 0) GTEST_SKIP() << "no ssh-keygen";
  Json received;
  corrald_.server().Post("/api/v1/clusters",
                         [&](const httplib::Request& req, httplib::Response& res) {
                           received = Json::parse(req.body);
                           reply(res, 201, cluster("Creating").dump());
                         });
  CliResult r = run({"cluster", "create", "demo"});
  EXPECT_EQ(r.code, 0) << r.err;
  std::ifstream pub(home_.path() + "/.ssh/corral_ed25519.pub");
  std::string key;
  std::getline(pub, key);
  ASSERT_FALSE(key.empty());
  EXPECT_EQ(received["sshKeys"], Json::array({key}));
  EXPECT_EQ(received["gpuNodes"], 4);
  EXPECT_EQ(received["gpusPerNode"], 8);
  EXPECT_EQ(received["cpuNodes"], 0);
}

TEST_F(CliClientTest, CreateWaitReportsEachNewPhaseThenTheSummary) {
  corrald_.server().Post("/api/v1/clusters", [&](const httplib::Request&, httplib::Response& res) {
    reply(res, 201, cluster("Creating", "allocating nodes").dump());
  });
  std::vector<Json> answers = {
      cluster("Creating", "allocating nodes"),
      cluster("Creating", "starting workers (1/2 ready)"),
      cluster("Creating", "starting workers (1/2 ready)"),
      cluster("Creating", "starting workers (2/2 ready)"),
      cluster("Running"),
  };
  std::atomic<size_t> gets{0};
  corrald_.server().Get("/api/v1/clusters/demo",
                        [&](const httplib::Request&, httplib::Response& res) {
                          size_t i = std::min(gets++, answers.size() - 1);
                          reply(res, 200, answers[i].dump());
                        });
  std::string k = writeKeyFile("a.pub", "ssh-ed25519 AAAA me\n");
  CliResult r = run({"cluster", "create", "demo", "--ssh-key", k, "--wait"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err,
            "Creating: allocating nodes\n"
            "Creating: starting workers (1/2 ready)\n"
            "Creating: starting workers (2/2 ready)\n"
            "Running\n");
  EXPECT_EQ(r.out.rfind("Name:       demo\nStatus:     Running\n", 0), 0u) << r.out;
  EXPECT_EQ(gets.load(), 5u);
  EXPECT_EQ(clock_.sleeps(), 5);
}

TEST_F(CliClientTest, CreateWaitWithJsonOutputPrintsTheRunningCluster) {
  corrald_.server().Post("/api/v1/clusters", [&](const httplib::Request&, httplib::Response& res) {
    reply(res, 201, cluster("Creating").dump());
  });
  corrald_.server().Get("/api/v1/clusters/demo",
                        [&](const httplib::Request&, httplib::Response& res) {
                          reply(res, 200, cluster("Running").dump());
                        });
  std::string k = writeKeyFile("a.pub", "ssh-ed25519 AAAA me\n");
  CliResult r = run({"cluster", "create", "demo", "--ssh-key", k, "--wait", "-o", "json"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out), cluster("Running"));
}

TEST_F(CliClientTest, CreateWaitOnFailureExitsOneWithTheReason) {
  corrald_.server().Post("/api/v1/clusters", [&](const httplib::Request&, httplib::Response& res) {
    reply(res, 201, cluster("Creating", "pulling image").dump());
  });
  corrald_.server().Get("/api/v1/clusters/demo",
                        [&](const httplib::Request&, httplib::Response& res) {
                          reply(res, 200, cluster("Failed", "", "image pull failed").dump());
                        });
  std::string k = writeKeyFile("a.pub", "ssh-ed25519 AAAA me\n");
  CliResult r = run({"cluster", "create", "demo", "--ssh-key", k, "--wait"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "Creating: pulling image\nFailed\nerror: cluster \"demo\" failed: image pull failed\n");
}

TEST_F(CliClientTest, CreateWaitTimesOut) {
  corrald_.server().Post("/api/v1/clusters", [&](const httplib::Request&, httplib::Response& res) {
    reply(res, 201, cluster("Creating", "booting").dump());
  });
  std::atomic<int> gets{0};
  corrald_.server().Get("/api/v1/clusters/demo",
                        [&](const httplib::Request&, httplib::Response& res) {
                          ++gets;
                          reply(res, 200, cluster("Creating", "booting").dump());
                        });
  std::string k = writeKeyFile("a.pub", "ssh-ed25519 AAAA me\n");
  CliResult r = run({"cluster", "create", "demo", "--ssh-key", k, "--wait", "--timeout", "1"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(gets.load(), 4);  // 1 s at 250 ms a poll.
  EXPECT_EQ(r.err,
            "Creating: booting\n"
            "error: timed out after 1s waiting for cluster \"demo\" to become Running; it is "
            "Creating: booting; follow it with: corral cluster get demo\n");
}

TEST_F(CliClientTest, CreateWaitRidesOutABriefOutage) {
  corrald_.server().Post("/api/v1/clusters", [&](const httplib::Request&, httplib::Response& res) {
    reply(res, 201, cluster("Creating").dump());
  });
  std::atomic<int> gets{0};
  corrald_.server().Get("/api/v1/clusters/demo",
                        [&](const httplib::Request&, httplib::Response& res) {
                          if (gets++ < 2) {
                            replyError(res, 503, "Unavailable", "store busy");
                          } else {
                            reply(res, 200, cluster("Running").dump());
                          }
                        });
  std::string k = writeKeyFile("a.pub", "ssh-ed25519 AAAA me\n");
  CliResult r = run({"cluster", "create", "demo", "--ssh-key", k, "--wait"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "Creating\nRunning\n");
}

TEST_F(CliClientTest, CreateConflictExitsOne) {
  corrald_.server().Post("/api/v1/clusters", [&](const httplib::Request&, httplib::Response& res) {
    replyError(res, 409, "Conflict", "cluster \"demo\" already exists");
  });
  std::string k = writeKeyFile("a.pub", "ssh-ed25519 AAAA me\n");
  CliResult r = run({"cluster", "create", "demo", "--ssh-key", k, "--wait"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: cluster \"demo\" already exists\n");
}

TEST_F(CliClientTest, DeleteWithoutWait) {
  corrald_.server().Delete("/api/v1/clusters/demo",
                           [&](const httplib::Request&, httplib::Response& res) {
                             reply(res, 202, cluster("Deleting").dump());
                           });
  CliResult r = run({"cluster", "delete", "demo"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "cluster \"demo\" is being deleted; follow it with: corral cluster get demo\n");
}

TEST_F(CliClientTest, DeleteWaitPollsUntilNotFound) {
  corrald_.server().Delete("/api/v1/clusters/demo",
                           [&](const httplib::Request&, httplib::Response& res) {
                             reply(res, 202, cluster("Deleting", "stopping nodes").dump());
                           });
  std::atomic<int> gets{0};
  corrald_.server().Get("/api/v1/clusters/demo",
                        [&](const httplib::Request&, httplib::Response& res) {
                          int i = gets++;
                          if (i == 0) {
                            reply(res, 200, cluster("Deleting", "stopping nodes").dump());
                          } else if (i == 1) {
                            reply(res, 200, cluster("Deleting", "removing network").dump());
                          } else {
                            replyError(res, 404, "NotFound", "cluster \"demo\" not found");
                          }
                        });
  CliResult r = run({"cluster", "delete", "demo", "--wait"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "Deleting: stopping nodes\nDeleting: removing network\n");
  EXPECT_EQ(r.out, "cluster \"demo\" deleted\n");
}

TEST_F(CliClientTest, EventsAsTableAndJson) {
  std::string body = R"({"events": [{"time": 1764464400000, "type": "Normal", "reason": "Created",)"
                     R"( "message": "cluster accepted"}]})";
  corrald_.server().Get(
      "/api/v1/clusters/demo/events",
      [&](const httplib::Request&, httplib::Response& res) { reply(res, 200, body); });
  CliResult r = run({"events", "demo"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("TIME", 0), 0u);
  EXPECT_NE(r.out.find("Normal   Created   cluster accepted\n"), std::string::npos) << r.out;
  r = run({"events", "demo", "-o", "json"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(Json::parse(r.out), Json::parse(body));
}

TEST_F(CliClientTest, EventsOfANodeOrARevisionAskTheServerForThem) {
  std::vector<std::string> queries;
  corrald_.server().Get("/api/v1/clusters/demo/events",
                        [&](const httplib::Request& req, httplib::Response& res) {
                          std::string q;
                          for (const auto& [k, v] : req.params) q += k + "=" + v + ";";
                          queries.push_back(q);
                          reply(res, 200, std::string(R"({"events": []})"));
                        });
  EXPECT_EQ(run({"events", "demo", "--node", "slinky-1"}).code, 0);
  EXPECT_EQ(run({"events", "demo", "--revision", "4"}).code, 0);
  EXPECT_EQ(run({"events", "demo", "--node", "cpu-workers-0", "--revision", "2"}).code, 0);
  EXPECT_EQ(run({"events", "demo"}).code, 0);
  EXPECT_EQ(queries, (std::vector<std::string>{"node=slinky-1;", "revision=4;",
                                               "node=cpu-workers-0;revision=2;", ""}));
  CliResult bad = run({"events", "demo", "--revision", "0"});
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.err.find("--revision"), std::string::npos) << bad.err;
  EXPECT_EQ(queries.size(), 4u) << "a refused option asks the server nothing";
}

TEST_F(CliClientTest, SshWritesKnownHostsAndExecsSsh) {
  corrald_.server().Get("/api/v1/clusters/demo",
                        [&](const httplib::Request&, httplib::Response& res) {
                          reply(res, 200, cluster("Running").dump());
                        });
  CliResult r = run({"ssh", "demo", "--", "sh", "-c", "echo $HOSTNAME"});
  EXPECT_EQ(r.code, 0) << r.err;
  std::string kh = home_.path() + "/.cache/corral/known_hosts-demo";
  std::ifstream in(kh);
  std::stringstream content;
  content << in.rdbuf();
  EXPECT_EQ(content.str(), "172.29.1.3 ssh-ed25519 HOSTKEY\n");
  struct stat st {};
  ASSERT_EQ(::stat(kh.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(execed_, (std::vector<std::string>{"ssh", "-o", "UserKnownHostsFile=" + kh, "-o",
                                               "StrictHostKeyChecking=yes", "-o", "LogLevel=ERROR",
                                               "-o", "BatchMode=yes", "--", "root@172.29.1.3",
                                               "'sh'", "'-c'", "'echo $HOSTNAME'"}));
}

TEST_F(CliClientTest, SshUsesCorralsKeyAndATerminalWhenInteractive) {
  corrald_.server().Get("/api/v1/clusters/demo",
                        [&](const httplib::Request&, httplib::Response& res) {
                          reply(res, 200, cluster("Running").dump());
                        });
  fs::create_directories(home_.path() + "/.ssh");
  std::ofstream(home_.path() + "/.ssh/corral_ed25519") << "key";
  stdinIsTty_ = true;
  CliResult r = run({"ssh", "demo"});
  EXPECT_EQ(r.code, 0) << r.err;
  std::vector<std::string> tail(execed_.end() - 6, execed_.end());
  EXPECT_EQ(tail,
            (std::vector<std::string>{"BatchMode=no", "-i", home_.path() + "/.ssh/corral_ed25519",
                                      "-t", "--", "root@172.29.1.3"}));
}

TEST_F(CliClientTest, SshNeedsARunningCluster) {
  corrald_.server().Get("/api/v1/clusters/demo",
                        [&](const httplib::Request&, httplib::Response& res) {
                          reply(res, 200, cluster("Creating", "booting").dump());
                        });
  CliResult r = run({"ssh", "demo"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: cluster \"demo\" is Creating; ssh needs Running\n");
  EXPECT_TRUE(execed_.empty());
}

TEST_F(CliClientTest, SshReportsAFailedExec) {
  corrald_.server().Get("/api/v1/clusters/demo",
                        [&](const httplib::Request&, httplib::Response& res) {
                          reply(res, 200, cluster("Running").dump());
                        });
  CliContext ctx = context();
  ctx.exec = [](const std::vector<std::string>&) {
    return failedPrecondition("cannot run ssh: not found in PATH; install the OpenSSH client");
  };
  CliResult r = runCorral({"--server", corrald_.url(), "ssh", "demo"}, ctx);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: cannot run ssh: not found in PATH; install the OpenSSH client\n");
}

TEST_F(CliClientTest, NonJsonAnswerIsAnError) {
  corrald_.server().Get("/api/v1/clusters", [&](const httplib::Request&, httplib::Response& res) {
    res.status = 502;
    res.set_content("Bad Gateway", "text/plain");
  });
  CliResult r = run({"cluster", "list"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: corrald answered HTTP 502: Bad Gateway\n");
}

TEST(CliClientNoServerTest, UnreachableServerSaysHowToStartIt) {
  int port = 0;
  {
    FakeCorrald gone;
    port = gone.port();
  }
  FakeCliClock clock;
  CliContext ctx;
  ctx.clock = &clock;
  std::string url = "http://127.0.0.1:" + std::to_string(port);
  CliResult r = runCorral({"cluster", "list", "--server", url}, ctx);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: cannot reach corrald at " + url +
                       ": could not connect; is it running? (start it with: corrald)\n");
}

}  // namespace
}  // namespace corral
