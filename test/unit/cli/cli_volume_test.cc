// `corral volume …` against a canned corrald: what each command sends, what
// it prints, and how it follows an attach or detach to its revision.

#include <gtest/gtest.h>

#include "cli/volume_cmd.h"
#include "support/cli_test_support.h"

namespace corral {
namespace {

Json volume(const std::string& name, const std::string& type, const std::string& hostPath,
            bool managed, std::vector<std::string> attachedTo = {}) {
  return {{"name", name},
          {"type", type},
          {"hostPath", hostPath},
          {"managed", managed},
          {"createdAt", 1764464400},
          {"attachedTo", attachedTo}};
}

using CliVolumeTest = FakeCorraldTest;

TEST_F(CliVolumeTest, CreateSendsNameAndTypeAndSaysHowToAttachIt) {
  serve("POST", "/api/v1/volumes", 201,
        volume("data", "pfs", "/var/lib/corral/volumes/data", true));
  CliResult r = run({"volume", "create", "data"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(requests_.lines(),
            std::vector<std::string>{R"(POST /api/v1/volumes {"name":"data","type":"pfs"})"});
  EXPECT_EQ(r.out,
            "volume \"data\" created at /var/lib/corral/volumes/data (pfs)\n"
            "attach it with: corral volume attach CLUSTER data --path /pfs\n");
  EXPECT_EQ(r.err, "");
}

TEST_F(CliVolumeTest, CreateWithASourceSendsItAbsolute) {
  serve("POST", "/api/v1/volumes", 201,
        volume("imagenet", "dataset", home_.path() + "/datasets/imagenet", false));
  CliResult r =
      run({"volume", "create", "imagenet", "--type", "dataset", "--source=~/datasets/imagenet"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(requests_.lines(),
            std::vector<std::string>{R"(POST /api/v1/volumes {"name":"imagenet","type":"dataset",)"
                                     R"("source":")" +
                                     home_.path() + R"(/datasets/imagenet"})"});
  EXPECT_EQ(r.out, "volume \"imagenet\" created at " + home_.path() +
                       "/datasets/imagenet (dataset)\n"
                       "attach it with: corral volume attach CLUSTER imagenet --path "
                       "/datasets/imagenet\n");
}

TEST(CliVolumePureTest, BuildCreateMakesARelativeSourceAbsolute) {
  VolumeOptions o;
  o.name = "scratch";
  o.type = "sfs";
  o.source = "work/../scratch";
  EXPECT_EQ(buildVolumeCreate(o, "/home/me", "/srv").dump(),
            R"({"name":"scratch","type":"sfs","source":"/srv/scratch"})");
  o.source = "/data/scratch/";
  EXPECT_EQ(buildVolumeCreate(o, "/home/me", "/srv").dump(),
            R"({"name":"scratch","type":"sfs","source":"/data/scratch/"})");
}

TEST_F(CliVolumeTest, CreateWithAnUnknownTypeIsAUsageError) {
  CliResult r = run({"volume", "create", "data", "--type", "nfs"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("--type: nfs not in {pfs,sfs,weka,dataset}\n", 0), 0u) << r.err;
  EXPECT_TRUE(requests_.lines().empty());
}

TEST_F(CliVolumeTest, CreatePassesCorraldsRefusalThrough) {
  corrald_.server().Post("/api/v1/volumes", [](const httplib::Request&, httplib::Response& res) {
    replyError(res, 400, "InvalidArgument", "--source /etc is part of the host's system");
  });
  CliResult r = run({"volume", "create", "etc", "--source", "/etc"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "error: --source /etc is part of the host's system\n");
}

TEST_F(CliVolumeTest, ListShowsWhereEachVolumeIsAttached) {
  Json body = {
      {"volumes",
       {volume("data", "pfs", "/var/lib/corral/volumes/data", true, {"demo:/pfs", "train:/data"}),
        volume("imagenet", "dataset", "/srv/imagenet", false)}}};
  serve("GET", "/api/v1/volumes", 200, body);
  CliResult r = run({"volume", "list"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "NAME       TYPE      PATH-ON-HOST                   ATTACHED-TO\n"
            "data       pfs       /var/lib/corral/volumes/data   demo:/pfs, train:/data\n"
            "imagenet   dataset   /srv/imagenet                  -\n");

  r = run({"volume", "list", "-o", "json"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out), body);
}

TEST(CliVolumePureTest, ListWithoutVolumesSaysHowToCreateOne) {
  EXPECT_EQ(volumeListTable(Json{{"volumes", Json::array()}}),
            "No volumes yet; create one with: corral volume create NAME\n");
}

TEST_F(CliVolumeTest, GetShowsTheVolumesFields) {
  serve("GET", "/api/v1/volumes/data", 200,
        volume("data", "pfs", "/var/lib/corral/volumes/data", true, {"demo:/pfs"}));
  CliResult r = run({"volume", "get", "data"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "Name:       data\n"
            "Type:       pfs\n"
            "Host path:  /var/lib/corral/volumes/data\n"
            "Managed:    yes: corrald made the directory and removes it with the volume\n"
            "Attached:   demo:/pfs\n"
            "Age:        1m\n");
}

TEST(CliVolumePureTest, DetailOfAnUnattachedDatasetOfYourOwn) {
  EXPECT_EQ(volumeDetail(volume("imagenet", "dataset", "/srv/imagenet", false), kCliNow),
            "Name:       imagenet\n"
            "Type:       dataset (read-only on clusters)\n"
            "Host path:  /srv/imagenet\n"
            "Managed:    no: your directory; deleting the volume leaves it\n"
            "Attached:   nowhere\n"
            "Age:        1m\n");
}

TEST_F(CliVolumeTest, GetOfAnUnknownVolumePassesTheErrorThrough) {
  corrald_.server().Get("/api/v1/volumes/nope",
                        [](const httplib::Request&, httplib::Response& res) {
                          replyError(res, 404, "NotFound", "no volume named \"nope\"");
                        });
  CliResult r = run({"volume", "get", "nope"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: no volume named \"nope\"\n");
}

TEST_F(CliVolumeTest, DeleteSaysWhatBecameOfTheDirectory) {
  serve("DELETE", "/api/v1/volumes/data", 200,
        volume("data", "pfs", "/var/lib/corral/volumes/data", true));
  serve("DELETE", "/api/v1/volumes/imagenet", 200,
        volume("imagenet", "dataset", "/srv/imagenet", false));
  CliResult r = run({"volume", "delete", "data"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "volume \"data\" deleted with its directory /var/lib/corral/volumes/data\n");
  r = run({"volume", "delete", "imagenet"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "volume \"imagenet\" deleted; /srv/imagenet was left as it was\n");
  EXPECT_EQ(requests_.lines(), (std::vector<std::string>{"DELETE /api/v1/volumes/data",
                                                         "DELETE /api/v1/volumes/imagenet"}));
}

TEST_F(CliVolumeTest, DeleteOfAnAttachedVolumePassesCorraldsReasonThrough) {
  corrald_.server().Delete("/api/v1/volumes/data",
                           [](const httplib::Request&, httplib::Response& res) {
                             replyError(res, 409, "FailedPrecondition",
                                        "volume \"data\" is attached to demo:/pfs; detach it "
                                        "first");
                           });
  CliResult r = run({"volume", "delete", "data"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "error: volume \"data\" is attached to demo:/pfs; detach it first\n");
}

TEST_F(CliVolumeTest, AttachSendsTheVolumeAndPathThenWaitsUntilApplied) {
  serve("POST", "/api/v1/clusters/demo/volumes", 202,
        changeAccepted(4, "attach volume data at /pfs", runningCluster("demo")));
  serveChangeOutcome("demo", runningCluster("demo"), 4);
  CliResult r = run({"volume", "attach", "demo", "data", "--path", "/pfs"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(requests_.lines(),
            std::vector<std::string>{
                R"(POST /api/v1/clusters/demo/volumes {"volume":"data","path":"/pfs"})"});
  EXPECT_EQ(r.out, "revision 4: attach volume data at /pfs\nrevision 4 applied\n");
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(revisionPolls_, 2);
}

TEST_F(CliVolumeTest, AttachWithoutAPathIsAUsageError) {
  CliResult r = run({"volume", "attach", "demo", "data"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind("--path is required\n", 0), 0u) << r.err;
  EXPECT_TRUE(requests_.lines().empty());
}

TEST_F(CliVolumeTest, AttachThatCorraldRefusesPassesTheReasonThrough) {
  corrald_.server().Post(
      "/api/v1/clusters/demo/volumes", [](const httplib::Request&, httplib::Response& res) {
        replyError(res, 400, "InvalidArgument", "volume path \"pfs\" must be absolute, e.g. /pfs");
      });
  CliResult r = run({"volume", "attach", "demo", "data", "--path", "pfs"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "error: volume path \"pfs\" must be absolute, e.g. /pfs\n");
  EXPECT_EQ(revisionPolls_, 0);
}

TEST_F(CliVolumeTest, DetachWithNoWaitReturnsOnceAccepted) {
  serve("DELETE", "/api/v1/clusters/demo/volumes/data", 202,
        changeAccepted(5, "detach volume data", runningCluster("demo")));
  CliResult r = run({"volume", "detach", "demo", "data", "--no-wait"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(requests_.lines(),
            std::vector<std::string>{"DELETE /api/v1/clusters/demo/volumes/data"});
  EXPECT_EQ(r.out,
            "revision 5: detach volume data\n"
            "revision 5 requested; follow it with: corral cluster history demo\n");
  EXPECT_EQ(revisionPolls_, 0);
}

TEST_F(CliVolumeTest, DetachAsJsonPrintsTheAppliedRevisionOnly) {
  serve("DELETE", "/api/v1/clusters/demo/volumes/data", 202,
        changeAccepted(5, "detach volume data", runningCluster("demo")));
  serveChangeOutcome("demo", runningCluster("demo"), 5);
  CliResult r = run({"volume", "detach", "demo", "data", "-o", "json"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out), revisionsWith(5, "Applied")["revisions"][0]);
  EXPECT_EQ(r.err, "revision 5: detach volume data\nrevision 5 applied\n");
}

TEST_F(CliVolumeTest, BareAndUnknownVolumeCommandsNameTheChoices) {
  CliResult r = run({"volume"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "error: \"corral volume\" needs a command: create, list, get, delete, attach, "
            "detach; see: corral volume --help\n");
  r = run({"volume", "mount", "demo", "data"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "error: unknown command \"corral volume mount\"; the commands are: create, list, "
            "get, delete, attach, detach\n");
}

}  // namespace
}  // namespace corral
