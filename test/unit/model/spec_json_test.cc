#include "model/spec_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace corral {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

ClusterSpec demoSpec() {
  ClusterSpec spec;
  spec.name = "demo";
  spec.gpuNodes = 2;
  spec.gpusPerNode = 4;
  spec.cpuNodes = 1;
  spec.sshKeys = {"ssh-ed25519 AAAAC3Nza you@laptop", "ssh-rsa AAAAB3Nza ci"};
  return spec;
}

ClusterRecord demoRecord() {
  ClusterRecord record;
  record.id = 7;
  record.spec = demoSpec();
  record.revision = 3;
  record.appliedRevision = 2;
  record.status = ClusterStatus::kTerminating;
  record.phase = "stopping nodes";
  record.reason = "slurmctld did not start: \"exit 1\"";
  record.subnet = "172.29.3.0/24";
  record.loginAddress = "172.29.3.3";
  record.loginHostKey = "ssh-ed25519 AAAAhost";
  record.nodes = {{"slinky-0", "slinky", "corral_node_1", "172.29.3.10"},
                  {"cpu-workers-0", "cpu-workers", "corral_node_2", "172.29.3.11"}};
  record.createdAt = 1764464400;
  record.updatedAt = 1764464405;
  record.version = 12;
  return record;
}

void expectSpecEq(const ClusterSpec& a, const ClusterSpec& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.gpuNodes, b.gpuNodes);
  EXPECT_EQ(a.gpusPerNode, b.gpusPerNode);
  EXPECT_EQ(a.cpuNodes, b.cpuNodes);
  EXPECT_EQ(a.sshKeys, b.sshKeys);
}

// Parses `text` as a strict request body and returns the error message, or
// "OK" when it parsed.
std::string strictError(const std::string& text) {
  StatusOr<ClusterSpec> spec = specFromJson(json::parse(text), /*strict=*/true);
  if (spec.isOk()) return "OK";
  EXPECT_EQ(spec.status().code(), Code::kInvalidArgument) << spec.status().toString();
  return spec.status().message();
}

TEST(StatusNameTest, NamesRoundTrip) {
  const ClusterStatus all[] = {ClusterStatus::kCreating,   ClusterStatus::kRunning,
                               ClusterStatus::kFailed,     ClusterStatus::kTerminating,
                               ClusterStatus::kTerminated, ClusterStatus::kDeleting,
                               ClusterStatus::kDeleted};
  const char* names[] = {"Creating",   "Running",  "Failed", "Terminating",
                         "Terminated", "Deleting", "Deleted"};
  for (size_t i = 0; i < std::size(all); ++i) {
    EXPECT_STREQ(statusName(all[i]), names[i]);
    EXPECT_EQ(parseStatus(names[i]), all[i]);
  }
}

TEST(StatusNameTest, ParseRejectsOtherSpellings) {
  EXPECT_EQ(parseStatus("running"), std::nullopt);
  EXPECT_EQ(parseStatus(""), std::nullopt);
  EXPECT_EQ(parseStatus("Running "), std::nullopt);
}

TEST(SpecJsonTest, ToJsonHasTheApiKeys) {
  json j = specToJson(demoSpec());
  EXPECT_EQ(j, json::parse(R"({"name": "demo", "image": {"name": "", "id": "", "slurmVersion": ""},
      "gpuNodes": 2, "gpusPerNode": 4, "cpuNodes": 1,
      "sshKeys": ["ssh-ed25519 AAAAC3Nza you@laptop", "ssh-rsa AAAAB3Nza ci"],
      "partitions": [], "slurmConf": {}, "loginGeneration": 0, "controllerGeneration": 0, "nodeGenerations": {}, "workerGeneration": 0,
      "volumes": [], "users": [],
      "containers": {"registry": false, "cachePath": "", "insecureRegistries": []}})"));
}

TEST(SpecJsonTest, ContainerSettingsRoundTripAndUnknownKeysAreRefused) {
  ClusterSpec spec = demoSpec();
  spec.containers = {true, "/shared/enroot-cache", {"10.0.0.9:5000"}};
  auto back = specFromJson(specToJson(spec), /*strict=*/true);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(back->containers, spec.containers);
  json j = specToJson(spec);
  j["containers"]["mirror"] = "x";
  auto bad = specFromJson(j, /*strict=*/true);
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("mirror"), std::string::npos) << bad.status().message();
  j = specToJson(spec);
  j["containers"]["registry"] = "yes";
  EXPECT_FALSE(specFromJson(j, /*strict=*/true).isOk());
}

TEST(SpecJsonTest, PartitionsAndSettingsRoundTrip) {
  ClusterSpec spec = demoSpec();
  spec.partitions = {{"short", "slinky-[0-1]", {{"MaxTime", "30"}}}};
  spec.slurmConf = {{"MinJobAge", "60"}};
  spec.loginGeneration = 3;
  auto back = specFromJson(specToJson(spec), /*strict=*/true);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(*back, spec);
  auto bad = specFromJson(json::parse(R"({"name": "a", "partitions": [{"name": "p", "node": "x"}]})"),
                          /*strict=*/true);
  ASSERT_FALSE(bad.isOk());
  EXPECT_THAT(bad.status().message(), HasSubstr("partitions[0].node"));
  auto notString = specFromJson(json::parse(R"({"name": "a", "slurmConf": {"MinJobAge": 60}})"),
                                /*strict=*/true);
  EXPECT_FALSE(notString.isOk());
}

TEST(SpecJsonTest, RoundTripsStrictAndLenient) {
  for (bool strict : {true, false}) {
    StatusOr<ClusterSpec> spec = specFromJson(specToJson(demoSpec()), strict);
    ASSERT_TRUE(spec.isOk()) << spec.status().toString();
    expectSpecEq(*spec, demoSpec());
  }
}

TEST(SpecJsonTest, MissingFieldsKeepDefaults) {
  StatusOr<ClusterSpec> spec = specFromJson(json::parse(R"({"name": "a"})"), true);
  ASSERT_TRUE(spec.isOk()) << spec.status().toString();
  ClusterSpec defaults;
  EXPECT_EQ(spec->name, "a");
  EXPECT_EQ(spec->gpuNodes, defaults.gpuNodes);
  EXPECT_EQ(spec->gpusPerNode, defaults.gpusPerNode);
  EXPECT_EQ(spec->cpuNodes, defaults.cpuNodes);
  EXPECT_TRUE(spec->sshKeys.empty());
}

TEST(SpecJsonTest, NameIsRequired) {
  EXPECT_EQ(strictError(R"({"gpuNodes": 1})"), R"(field "name" is required)");
  StatusOr<ClusterSpec> lenient = specFromJson(json::parse(R"({"gpuNodes": 1})"), false);
  ASSERT_FALSE(lenient.isOk());
  EXPECT_EQ(lenient.status().message(), R"(field "name" is required)");
}

TEST(SpecJsonTest, StrictRejectsUnknownFieldsAndSuggests) {
  EXPECT_EQ(strictError(R"({"name": "a", "gpuNode": 1})"),
            R"(unknown field "gpuNode"; did you mean "gpuNodes"?)");
  EXPECT_EQ(strictError(R"({"name": "a", "GPUNODES": 1})"),
            R"(unknown field "GPUNODES"; did you mean "gpuNodes"?)");
  EXPECT_EQ(strictError(R"({"name": "a", "flavour": "big"})"), R"(unknown field "flavour")");
}

TEST(SpecJsonTest, LenientIgnoresUnknownFieldsAndNulls) {
  StatusOr<ClusterSpec> spec =
      specFromJson(json::parse(R"({"name": "a", "future": {"x": 1}, "cpuNodes": null})"), false);
  ASSERT_TRUE(spec.isOk()) << spec.status().toString();
  EXPECT_EQ(spec->cpuNodes, 0);
}

TEST(SpecJsonTest, StrictRejectsWrongTypes) {
  EXPECT_EQ(strictError(R"({"name": 5})"), R"(field "name" must be a string)");
  EXPECT_EQ(strictError(R"({"name": null})"), R"(field "name" must be a string)");
  EXPECT_EQ(strictError(R"({"name": "a", "gpuNodes": 1.5})"),
            R"(field "gpuNodes" must be an integer)");
  EXPECT_EQ(strictError(R"({"name": "a", "gpuNodes": true})"),
            R"(field "gpuNodes" must be an integer)");
  EXPECT_EQ(strictError(R"({"name": "a", "gpuNodes": "4"})"),
            R"(field "gpuNodes" must be an integer)");
  EXPECT_EQ(strictError(R"({"name": "a", "gpusPerNode": null})"),
            R"(field "gpusPerNode" must be an integer)");
  EXPECT_EQ(strictError(R"({"name": "a", "cpuNodes": [1]})"),
            R"(field "cpuNodes" must be an integer)");
  EXPECT_EQ(strictError(R"({"name": "a", "sshKeys": "ssh-ed25519 AAAA"})"),
            R"(field "sshKeys" must be an array of strings)");
  EXPECT_EQ(strictError(R"({"name": "a", "sshKeys": ["ok", 3]})"),
            R"(field "sshKeys[1]" must be a string)");
}

TEST(SpecJsonTest, LenientStillRejectsWrongTypes) {
  StatusOr<ClusterSpec> spec =
      specFromJson(json::parse(R"({"name": "a", "gpuNodes": "4"})"), false);
  ASSERT_FALSE(spec.isOk());
  EXPECT_EQ(spec.status().message(), R"(field "gpuNodes" must be an integer)");
}

TEST(SpecJsonTest, IntegersMustFitInAnInt) {
  EXPECT_EQ(strictError(R"({"name": "a", "gpuNodes": 2147483647})"), "OK");
  EXPECT_EQ(strictError(R"({"name": "a", "gpuNodes": -2147483648})"), "OK");
  for (const char* big : {"2147483648", "-2147483649", "18446744073709551616", "1e300"}) {
    EXPECT_THAT(strictError(std::string(R"({"name": "a", "gpuNodes": )") + big + "}"),
                HasSubstr(R"(field "gpuNodes" must be an integer from -2147483648 to 2147483647)"))
        << big;
  }
}

TEST(SpecJsonTest, IntegralFloatsAreIntegers) {
  StatusOr<ClusterSpec> spec = specFromJson(json::parse(R"({"name": "a", "gpuNodes": 4.0})"), true);
  ASSERT_TRUE(spec.isOk()) << spec.status().toString();
  EXPECT_EQ(spec->gpuNodes, 4);
}

TEST(SpecJsonTest, NegativeValuesAreLeftToTheValidator) {
  StatusOr<ClusterSpec> spec = specFromJson(json::parse(R"({"name": "a", "cpuNodes": -1})"), true);
  ASSERT_TRUE(spec.isOk()) << spec.status().toString();
  EXPECT_EQ(spec->cpuNodes, -1);
}

TEST(SpecJsonTest, BodyMustBeAnObject) {
  for (const char* text : {"[]", "\"demo\"", "null", "3"}) {
    StatusOr<ClusterSpec> spec = specFromJson(json::parse(text), true);
    ASSERT_FALSE(spec.isOk()) << text;
    EXPECT_EQ(spec.status().code(), Code::kInvalidArgument);
    EXPECT_EQ(spec.status().message(), "cluster spec must be a JSON object");
  }
}

TEST(RecordJsonTest, RoundTripsEveryMember) {
  ClusterRecord in = demoRecord();
  StatusOr<ClusterRecord> out = recordFromJson(recordToJson(in));
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  EXPECT_EQ(out->id, in.id);
  expectSpecEq(out->spec, in.spec);
  EXPECT_EQ(out->revision, in.revision);
  EXPECT_EQ(out->appliedRevision, in.appliedRevision);
  EXPECT_EQ(out->status, in.status);
  EXPECT_EQ(out->phase, in.phase);
  EXPECT_EQ(out->reason, in.reason);
  EXPECT_EQ(out->subnet, in.subnet);
  EXPECT_EQ(out->loginAddress, in.loginAddress);
  EXPECT_EQ(out->loginHostKey, in.loginHostKey);
  ASSERT_EQ(out->nodes.size(), in.nodes.size());
  for (size_t i = 0; i < in.nodes.size(); ++i) {
    EXPECT_EQ(out->nodes[i].name, in.nodes[i].name);
    EXPECT_EQ(out->nodes[i].group, in.nodes[i].group);
    EXPECT_EQ(out->nodes[i].physicalId, in.nodes[i].physicalId);
    EXPECT_EQ(out->nodes[i].address, in.nodes[i].address);
  }
  EXPECT_EQ(out->createdAt, in.createdAt);
  EXPECT_EQ(out->updatedAt, in.updatedAt);
  EXPECT_EQ(out->version, in.version);
  // And the JSON survives text: what the store writes is what it reads.
  EXPECT_EQ(recordToJson(*out), json::parse(recordToJson(in).dump()));
}

TEST(RecordJsonTest, ShapedLikeTheApiCluster) {
  json j = recordToJson(demoRecord());
  EXPECT_EQ(j["name"], "demo");
  EXPECT_EQ(j["status"], "Terminating");
  EXPECT_EQ(j["spec"]["gpuNodes"], 2);
  EXPECT_EQ(j["login"]["address"], "172.29.3.3");
  EXPECT_EQ(j["login"]["hostKey"], "ssh-ed25519 AAAAhost");
  EXPECT_EQ(j["nodes"][0], json::parse(R"({"name": "slinky-0", "group": "slinky",
      "physicalId": "corral_node_1", "address": "172.29.3.10"})"));
  EXPECT_EQ(j["createdAt"], 1764464400);
}

TEST(RecordJsonTest, MinimalRecordTakesDefaults) {
  StatusOr<ClusterRecord> record = recordFromJson(json::parse(R"({"spec": {"name": "x"}})"));
  ASSERT_TRUE(record.isOk()) << record.status().toString();
  EXPECT_EQ(record->spec.name, "x");
  EXPECT_EQ(record->status, ClusterStatus::kCreating);
  EXPECT_EQ(record->version, 0);
  EXPECT_TRUE(record->nodes.empty());
}

TEST(RecordJsonTest, IgnoresMembersFromANewerCorral) {
  json j = recordToJson(demoRecord());
  j["futureField"] = {{"a", 1}};
  j["spec"]["futureSpecField"] = true;
  j["nodes"][0]["gpus"] = 8;
  StatusOr<ClusterRecord> record = recordFromJson(j);
  ASSERT_TRUE(record.isOk()) << record.status().toString();
  EXPECT_EQ(record->nodes[0].name, "slinky-0");
}

TEST(RecordJsonTest, ReportsWhereItIsWrong) {
  auto error = [](const std::string& mutation, const json& value) {
    json j = recordToJson(demoRecord());
    j[json::json_pointer(mutation)] = value;
    StatusOr<ClusterRecord> record = recordFromJson(j);
    EXPECT_FALSE(record.isOk()) << mutation;
    return record.isOk() ? std::string("OK") : record.status().message();
  };
  EXPECT_EQ(error("/spec/gpuNodes", "many"), R"(field "spec.gpuNodes" must be an integer)");
  EXPECT_EQ(error("/nodes/1/address", 5), R"(field "nodes[1].address" must be a string)");
  EXPECT_EQ(error("/nodes/1", "slinky-1"), R"(field "nodes[1]" must be an object)");
  EXPECT_EQ(error("/login", "x"), R"(field "login" must be an object)");
  EXPECT_EQ(error("/version", 1.5), R"(field "version" must be an integer)");
  EXPECT_EQ(error("/spec", json::array()), R"(field "spec" must be an object)");
  EXPECT_EQ(error("/name", "other"),
            R"(field "name" ("other") does not match field "spec.name" ("demo"))");
  EXPECT_THAT(error("/status", "Sleeping"),
              HasSubstr(R"(field "status" must be one of Creating, Running, Failed, )"));
}

TEST(RecordJsonTest, SpecIsRequired) {
  StatusOr<ClusterRecord> record = recordFromJson(json::parse(R"({"name": "x"})"));
  ASSERT_FALSE(record.isOk());
  EXPECT_EQ(record.status().message(), R"(field "spec" is required)");
}

TEST(RecordJsonTest, LargeInt64sSurvive) {
  ClusterRecord in = demoRecord();
  in.version = 9007199254740993;  // 2^53 + 1: would be lost through a double.
  in.createdAt = -5;
  StatusOr<ClusterRecord> out = recordFromJson(json::parse(recordToJson(in).dump()));
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  EXPECT_EQ(out->version, in.version);
  EXPECT_EQ(out->createdAt, -5);
}

TEST(NodeJsonTest, RoundTrips) {
  NodeRecord node{"slinky-3", "slinky", "corral_node_9", "172.29.1.13"};
  json j = nodeToJson(node);
  EXPECT_EQ(j, json::parse(R"({"name": "slinky-3", "group": "slinky",
      "physicalId": "corral_node_9", "address": "172.29.1.13"})"));
  StatusOr<NodeRecord> back = nodeFromJson(j);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(back->physicalId, "corral_node_9");
}

TEST(EventJsonTest, RoundTrips) {
  Event event{42, "demo", 1764464400123, "Warning", "NodeFailed", "slinky-3 went down", "", 0};
  json j = eventToJson(event);
  EXPECT_EQ(j, json::parse(R"({"id": 42, "cluster": "demo", "time": 1764464400123,
      "type": "Warning", "reason": "NodeFailed", "message": "slinky-3 went down"})"));
  StatusOr<Event> back = eventFromJson(j);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(back->id, 42);
  EXPECT_EQ(back->time, 1764464400123);
  EXPECT_EQ(back->message, "slinky-3 went down");
  EXPECT_FALSE(eventFromJson(json::parse(R"({"time": "now"})")).isOk());
}

}  // namespace
}  // namespace corral
