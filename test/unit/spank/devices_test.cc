#include "spank/devices.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace corral::spank {
namespace {

using ::testing::ElementsAre;

const std::vector<std::string> kDev = {"fd",      "full",    "null",    "nvidia0", "nvidia1",
                                       "nvidia2", "nvidia3", "nvidia10", "nvidiactl", "nvidia-uvm",
                                       "pts",     "shm",     "tty",     "zero"};

TEST(DevicesTest, ATaskKeepsItsGpusTheControlDevicesAndEverythingElse) {
  EXPECT_THAT(devicesToKeep(kDev, {1, 3}),
              ElementsAre("fd", "full", "null", "nvidia1", "nvidia3", "nvidiactl", "nvidia-uvm",
                          "pts", "shm", "tty", "zero"));
}

TEST(DevicesTest, ATaskWithoutGpusSeesNone) {
  EXPECT_THAT(devicesToKeep(kDev, {}), ElementsAre("fd", "full", "null", "pts", "shm", "tty", "zero"));
}

TEST(DevicesTest, TwoDigitMinorsAreTheirOwnDevices) {
  EXPECT_THAT(devicesToKeep(kDev, {10}),
              ElementsAre("fd", "full", "null", "nvidia10", "nvidiactl", "nvidia-uvm", "pts", "shm",
                          "tty", "zero"));
}

TEST(DevicesTest, ANodeWithoutGpusKeepsAll) {
  std::vector<std::string> cpu = {"full", "null", "pts", "zero"};
  EXPECT_EQ(devicesToKeep(cpu, {}), cpu);
}

}  // namespace
}  // namespace corral::spank
