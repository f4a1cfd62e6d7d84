#include "runtime/local/pod_json.h"

#include <gtest/gtest.h>

#include "runtime/local/pod_supervisor.h"

namespace corral {
namespace {

TEST(PodJsonTest, LaunchSpecRoundTrips) {
  LaunchSpec s;
  s.pod.cluster = "demo";
  s.pod.name = "slinky-0";
  s.pod.role = "worker";
  s.pod.address = "172.29.0.10";
  s.pod.prefixLength = 24;
  s.pod.gpus = 8;
  s.pod.mounts = {{"/var/lib/corral/clusters/demo/etc/slurm", "/etc/slurm", true},
                  {"/var/lib/corral/clusters/demo/shared", "/shared", false}};
  s.pod.image = {"debian13-slurm24.11", std::string(64, 'b'), "24.11"};
  s.pod.setupDirs = {"/run/munge"};
  s.pod.daemons = {{"munged", {"munged", "-F"}, {{"A", "b"}}, {0, "/run/munge/munge.socket.2",
                                                               std::chrono::seconds(10)}, {}},
                   {"slurmd", {"slurmd", "-D"}, {}, {6818, "", std::chrono::seconds(30)},
                    {"172.29.0.2", 6817}}};
  s.netnsPath = "/run/netns/corral-demo.slinky-0";
  s.podDir = "/var/lib/corral/clusters/demo/pods/slinky-0";
  s.imageRootfs = "/var/cache/corral/images/" + std::string(64, 'b') + "/rootfs";
  s.ids = {0x70010000, 65536};

  auto back = launchSpecFromJson(launchSpecToJson(s));
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(back->pod.name, "slinky-0");
  EXPECT_EQ(back->pod.gpus, 8);
  ASSERT_EQ(back->pod.mounts.size(), 2u);
  EXPECT_TRUE(back->pod.mounts[0].readOnly);
  EXPECT_FALSE(back->pod.mounts[1].readOnly);
  EXPECT_EQ(back->pod.mounts[1].target, "/shared");
  ASSERT_EQ(back->pod.daemons.size(), 2u);
  EXPECT_EQ(back->pod.daemons[0].env.at("A"), "b");
  EXPECT_EQ(back->pod.daemons[0].ready.unixSocket, "/run/munge/munge.socket.2");
  EXPECT_EQ(back->pod.daemons[1].ready.tcpPort, 6818);
  EXPECT_EQ(back->pod.daemons[1].ready.timeout, std::chrono::seconds(30));
  EXPECT_EQ(back->pod.daemons[1].startAfter.host, "172.29.0.2");
  EXPECT_EQ(back->pod.daemons[1].startAfter.port, 6817);
  EXPECT_EQ(back->netnsPath, s.netnsPath);
  EXPECT_EQ(back->podDir, s.podDir);
  EXPECT_EQ(back->imageRootfs, s.imageRootfs);
  EXPECT_EQ(back->ids, s.ids);
  EXPECT_EQ(back->pod.image, s.pod.image);
  EXPECT_EQ(launchSpecToJson(*back), launchSpecToJson(s));
}

TEST(PodJsonTest, MalformedSpecIsAnError) {
  auto r = launchSpecFromJson(nlohmann::json{{"name", "x"}});
  EXPECT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
}

TEST(PodJsonTest, APodNeverGetsTheHostsIds) {
  LaunchSpec s;
  s.pod.cluster = "demo";
  s.pod.name = "login";
  s.pod.role = "login";
  s.pod.address = "172.29.0.3";
  s.netnsPath = "/run/netns/x";
  s.podDir = "/p";
  s.imageRootfs = "/i";
  s.ids = {0, 65536};  // Pod root would be the host's root.
  auto r = launchSpecFromJson(launchSpecToJson(s));
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace corral
