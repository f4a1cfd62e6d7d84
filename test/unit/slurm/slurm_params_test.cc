#include "slurm/slurm_params.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace corral {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// The normalised value, or "error: <message>", so that a failed expectation
// shows what the check said.
std::string outcome(const StatusOr<std::string>& r) {
  return r.isOk() ? *r : "error: " + r.status().message();
}

std::string conf(const std::string& name, const std::string& value) {
  const ParamDef* def = findSlurmConfParam(name);
  return def == nullptr ? "no such parameter" : outcome(checkParamValue(*def, value));
}

std::string part(const std::string& name, const std::string& value) {
  const ParamDef* def = findPartitionParam(name);
  return def == nullptr ? "no such parameter" : outcome(checkParamValue(*def, value));
}

// "Key=Value" parsed against slurm.conf's table, as "Key=Value" or "error: ...".
std::string assign(const std::vector<ParamDef>& defs, const std::string& assignment) {
  auto r = parseAssignment(defs, assignment);
  return r.isOk() ? r->first + "=" + r->second : "error: " + r.status().message();
}

std::string assignConf(const std::string& assignment) {
  return assign(slurmConfParams(), assignment);
}

// A value each definition must accept, derived from the definition alone.
std::string sampleValue(const ParamDef& def) {
  switch (def.type) {
    case ParamType::kInt:
      return std::to_string(def.min);
    case ParamType::kBool:
      return "YES";
    case ParamType::kEnum:
    case ParamType::kEnumList:
      return def.values.front();
    case ParamType::kTime:
      return "30";
    case ParamType::kPath:
      return "/etc/slurm/script.sh";
    case ParamType::kOptions:
      return "bf_continue";
    case ParamType::kTresWeights:
      return "CPU=1";
    case ParamType::kNameList:
      return "physics";
  }
  return "";
}

std::vector<const ParamDef*> allDefs() {
  std::vector<const ParamDef*> out;
  for (const auto& d : slurmConfParams()) out.push_back(&d);
  for (const auto& d : partitionParams()) out.push_back(&d);
  return out;
}

// ---- The tables ----

TEST(SlurmParamsTables, EveryDefinitionIsDocumentedAndSane) {
  for (const auto* table : {&slurmConfParams(), &partitionParams()}) {
    std::set<std::string> names;
    for (const auto& d : *table) {
      SCOPED_TRACE(d.name);
      EXPECT_FALSE(d.name.empty());
      EXPECT_TRUE(names.insert(d.name).second) << "defined twice";
      EXPECT_FALSE(d.help.empty());
      EXPECT_EQ(d.help.find('\n'), std::string::npos);
      if (d.type == ParamType::kInt) {
        EXPECT_LE(d.min, d.max);
        EXPECT_TRUE(d.values.empty());
      } else {
        EXPECT_EQ(d.min, 0);
        EXPECT_EQ(d.max, 0);
        EXPECT_FALSE(d.allowUnlimited);
      }
      bool isEnum = d.type == ParamType::kEnum || d.type == ParamType::kEnumList;
      EXPECT_EQ(isEnum, !d.values.empty());
      std::set<std::string> values;
      for (const auto& v : d.values) {
        EXPECT_TRUE(values.insert(v).second) << v << " listed twice";
        EXPECT_EQ(v.find_first_of(", \t\n#="), std::string::npos) << v;
        // Each listed value is accepted as it is spelled.
        EXPECT_EQ(outcome(checkParamValue(d, v)), v);
      }
      EXPECT_EQ(outcome(checkParamValue(d, sampleValue(d))), sampleValue(d));
    }
  }
}

TEST(SlurmParamsTables, LookupIsCaseInsensitiveAndReturnsCanonicalNames) {
  ASSERT_NE(findSlurmConfParam("minjobage"), nullptr);
  EXPECT_EQ(findSlurmConfParam("minjobage")->name, "MinJobAge");
  EXPECT_EQ(findSlurmConfParam("SCHEDULERPARAMETERS")->type, ParamType::kOptions);
  EXPECT_EQ(findSlurmConfParam("PriorityWeightTRES")->type, ParamType::kTresWeights);
  ASSERT_NE(findPartitionParam("maxtime"), nullptr);
  EXPECT_EQ(findPartitionParam("maxtime")->name, "MaxTime");
  EXPECT_EQ(findPartitionParam("allowgroups")->type, ParamType::kNameList);
  EXPECT_EQ(findSlurmConfParam("MaxTime"), nullptr) << "a partition parameter only";
}

TEST(SlurmParamsTables, CorralOwnedParametersAreNotAllowlisted) {
  for (const char* name : {"SlurmUser", "ControlMachine", "SlurmctldHost", "AuthType", "SelectType",
                           "SelectTypeParameters", "NodeName", "PartitionName", "Include",
                           "PluginDir", "StateSaveLocation", "ProctrackType"}) {
    EXPECT_EQ(findSlurmConfParam(name), nullptr) << name;
  }
  for (const char* name : {"Nodes", "PartitionName", "AllowUsers", "SlurmUser"}) {
    EXPECT_EQ(findPartitionParam(name), nullptr) << name;
  }
}

TEST(SlurmParamsTables, RestartFlags) {
  for (const char* name : {"SchedulerType", "PriorityType", "PreemptType", "MaxJobCount"}) {
    EXPECT_TRUE(findSlurmConfParam(name)->needsRestart) << name;
    EXPECT_TRUE(slurmConfNeedsRestart(name)) << name;
  }
  for (const char* name : {"MinJobAge", "SchedulerParameters", "DebugFlags", "PreemptMode"}) {
    EXPECT_FALSE(findSlurmConfParam(name)->needsRestart) << name;
    EXPECT_FALSE(slurmConfNeedsRestart(name)) << name;
  }
  // Restarting is the safe answer for a name the table does not know.
  EXPECT_TRUE(slurmConfNeedsRestart("NotAParameter"));
  for (const auto& d : partitionParams()) EXPECT_FALSE(d.needsRestart) << d.name;
}

TEST(SlurmParamsTables, DebugFlagsAreThoseOfSlurm2205) {
  const ParamDef* flags = findSlurmConfParam("DebugFlags");
  ASSERT_NE(flags, nullptr);
  for (const char* f :
       {"Backfill",     "BackfillMap", "CPU_Bind", "Gres",        "Gang",
        "NodeFeatures", "Power",       "Priority", "Reservation", "Route",
        "Script",       "SelectType",  "Steps",    "Switch",      "TraceJobs",
        "Triggers",     "Agent",       "Network",  "Profile",     "Protocol",
        "Energy",       "Federation",  "Data",     "DB_Step",     "Elasticsearch"}) {
    EXPECT_EQ(conf("DebugFlags", f), f);
  }
  // JobComp arrived in 23.02; slurmctld 22.05 stops with "DebugFlags invalid".
  EXPECT_THAT(conf("DebugFlags", "JobComp"), HasSubstr("\"JobComp\" is not one of them"));
}

// ---- kInt ----

TEST(SlurmParamsInt, AcceptsTheRangeAndWritesPlainDecimal) {
  EXPECT_EQ(conf("MinJobAge", "2"), "2");
  EXPECT_EQ(conf("MinJobAge", "86400"), "86400");
  // Slurm reads "0300" as octal 192.
  EXPECT_EQ(conf("MinJobAge", "0300"), "300");
  EXPECT_EQ(conf("MaxArraySize", "0"), "0");
  EXPECT_EQ(conf("PriorityWeightAge", "4294967295"), "4294967295");
  EXPECT_EQ(conf("ReturnToService", "2"), "2");
  EXPECT_EQ(part("MinNodes", "0"), "0");
}

TEST(SlurmParamsInt, RefusesWhatIsNotAnIntegerInRange) {
  EXPECT_EQ(conf("MinJobAge", "abc"),
            "error: MinJobAge must be an integer from 2 to 86400, got \"abc\"");
  for (const char* bad : {"1", "86401", "-5", "+5", "3.5", "1e3", "0x10", "300s",
                          "99999999999999999999", "-99999999999999999999", "-", ""}) {
    EXPECT_THAT(conf("MinJobAge", bad), StartsWith("error: MinJobAge must be an integer")) << bad;
  }
  EXPECT_THAT(conf("PriorityWeightAge", "4294967296"), StartsWith("error:"));
  EXPECT_THAT(conf("MaxArraySize", "4000002"), StartsWith("error:"));
  EXPECT_THAT(conf("ReturnToService", "3"), StartsWith("error:"));
  EXPECT_THAT(conf("JobRequeue", "2"), StartsWith("error:"));
  EXPECT_THAT(part("PriorityTier", "65534"), StartsWith("error:"));
}

TEST(SlurmParamsInt, UnlimitedOnlyWhereAllowedAndAlwaysSpelledInfinite) {
  EXPECT_EQ(conf("OverTimeLimit", "unlimited"), "INFINITE");
  EXPECT_EQ(conf("OverTimeLimit", "Infinite"), "INFINITE");
  EXPECT_EQ(conf("MaxMemPerNode", "UNLIMITED"), "INFINITE");
  // slurmctld reads SuspendTime=UNLIMITED as 0: suspend idle nodes at once.
  EXPECT_EQ(conf("SuspendTime", "UNLIMITED"), "INFINITE");
  EXPECT_EQ(part("MaxNodes", "unlimited"), "INFINITE");
  EXPECT_EQ(part("MaxCPUsPerNode", "INFINITE"), "INFINITE");
  EXPECT_THAT(conf("OverTimeLimit", "forever"),
              HasSubstr("must be an integer from 0 to 65533, or UNLIMITED"));
  EXPECT_EQ(conf("MinJobAge", "UNLIMITED"),
            "error: MinJobAge must be an integer from 2 to 86400, got \"UNLIMITED\"");
  EXPECT_THAT(conf("DefMemPerCPU", "INFINITE"), StartsWith("error:"));
  EXPECT_THAT(part("MinNodes", "UNLIMITED"), StartsWith("error:"));
}

// ---- kBool, kEnum ----

TEST(SlurmParamsBool, YesOrNoInAnyCase) {
  EXPECT_EQ(conf("PriorityFavorSmall", "yes"), "YES");
  EXPECT_EQ(part("Default", "No"), "NO");
  EXPECT_EQ(part("LLN", "YES"), "YES");
  EXPECT_EQ(conf("PriorityFavorSmall", "true"),
            "error: PriorityFavorSmall must be YES or NO, got \"true\"");
  for (const char* bad : {"1", "0", "Y", "yess", "YES,NO", ""}) {
    EXPECT_THAT(part("Hidden", bad), StartsWith("error: Hidden must be YES or NO")) << bad;
  }
}

TEST(SlurmParamsEnum, MatchesInAnyCaseAndWritesTheTablesSpelling) {
  EXPECT_EQ(conf("SchedulerType", "SCHED/BACKFILL"), "sched/backfill");
  EXPECT_EQ(conf("SlurmctldDebug", "DEBUG2"), "debug2");
  EXPECT_EQ(conf("EnforcePartLimits", "any"), "ANY");
  EXPECT_EQ(conf("MpiDefault", "PMI2"), "pmi2");
  EXPECT_EQ(part("State", "inactive"), "INACTIVE");
  EXPECT_EQ(part("OverSubscribe", "force"), "FORCE");
  EXPECT_EQ(conf("SchedulerType", "sched/wiki"),
            "error: SchedulerType must be one of sched/backfill, sched/builtin, got "
            "\"sched/wiki\"");
  for (const char* bad : {"sched/backfill,", "sched/backfill,sched/builtin", "backfill", ""}) {
    EXPECT_THAT(conf("SchedulerType", bad), StartsWith("error:")) << bad;
  }
  EXPECT_THAT(conf("MpiDefault", "pmix"), StartsWith("error:"));
  EXPECT_THAT(part("OverSubscribe", "YES:4"), StartsWith("error:"));
}

// ---- kEnumList ----

TEST(SlurmParamsEnumList, NormalisesEachEntryAndRefusesRepeatsAndEmptyEntries) {
  EXPECT_EQ(conf("DebugFlags", "backfill,gres,db_step"), "Backfill,Gres,DB_Step");
  EXPECT_EQ(conf("PropagateResourceLimits", "core,nofile"), "CORE,NOFILE");
  EXPECT_EQ(conf("PropagateResourceLimits", "all"), "ALL");
  EXPECT_EQ(conf("PropagateResourceLimitsExcept", "MEMLOCK"), "MEMLOCK");
  EXPECT_THAT(conf("DebugFlags", "Gres,gres"), HasSubstr("(\"gres\" is given twice)"));
  EXPECT_THAT(conf("DebugFlags", "Gres,,Steps"), HasSubstr("(the list has an empty entry)"));
  EXPECT_THAT(conf("DebugFlags", "Gres,"), HasSubstr("(the list has an empty entry)"));
  EXPECT_THAT(conf("DebugFlags", ",Gres"), HasSubstr("(the list has an empty entry)"));
  EXPECT_THAT(conf("DebugFlags", "Gres,Bogus"),
              AllOf(StartsWith("error: DebugFlags must be a comma-separated list of distinct "
                               "values from Accrue, "),
                    HasSubstr("got \"Gres,Bogus\" (\"Bogus\" is not one of them)")));
}

TEST(SlurmParamsEnumList, AllAndNoneStandAloneInResourceLimits) {
  for (const char* bad : {"ALL,CORE", "core,none", "ALL,NONE"}) {
    for (const char* name : {"PropagateResourceLimits", "PropagateResourceLimitsExcept"}) {
      EXPECT_THAT(conf(name, bad), HasSubstr("cannot be combined with other entries"))
          << name << "=" << bad;
    }
  }
}

TEST(SlurmParamsEnumList, PreemptModeFollowsSlurmsGrammar) {
  EXPECT_EQ(conf("PreemptMode", "suspend,gang"), "SUSPEND,GANG");
  EXPECT_EQ(conf("PreemptMode", "WITHIN,REQUEUE"), "WITHIN,REQUEUE");
  EXPECT_EQ(conf("PreemptMode", "OFF"), "OFF");
  EXPECT_EQ(part("PreemptMode", "requeue"), "REQUEUE");
  EXPECT_THAT(conf("PreemptMode", "OFF,CANCEL"),
              HasSubstr("(at most one of OFF, CANCEL, REQUEUE and SUSPEND can be given)"));
  EXPECT_THAT(part("PreemptMode", "SUSPEND,REQUEUE"), HasSubstr("at most one of"));
  EXPECT_THAT(conf("PreemptMode", "GANG,WITHIN,CANCEL"),
              HasSubstr("(GANG and WITHIN cannot be combined)"));
  EXPECT_THAT(part("PreemptMode", "WITHIN"), HasSubstr("\"WITHIN\" is not one of them"));
}

// ---- kTime ----

TEST(SlurmParamsTime, AcceptsEverySlurmFormat) {
  for (const char* good : {"30", "0", "1:59", "90:00", "00:30:00", "48:00:00", "1-0", "1-23",
                           "1-23:59", "1-00:00:00", "7-12:30:15", "35791393", "24855-03:13:00"}) {
    EXPECT_EQ(part("MaxTime", good), good);
  }
  EXPECT_EQ(part("MaxTime", "INFINITE"), "INFINITE");
  EXPECT_EQ(part("DefaultTime", "unlimited"), "UNLIMITED");
  EXPECT_EQ(conf("PriorityMaxAge", "7-0"), "7-0");
}

TEST(SlurmParamsTime, RefusesMalformedAndOutOfRangeTimes) {
  EXPECT_EQ(part("MaxTime", "1:60"),
            "error: MaxTime must be a time as M, M:S, H:M:S, D-H, D-H:M or D-H:M:S (e.g. 90, "
            "1-00:00:00), or UNLIMITED, got \"1:60\" (seconds must be below 60)");
  EXPECT_THAT(part("MaxTime", "1:00:60"), HasSubstr("(seconds must be below 60)"));
  EXPECT_THAT(part("MaxTime", "1:60:00"), HasSubstr("(minutes must be below 60)"));
  EXPECT_THAT(part("MaxTime", "1-0:60"), HasSubstr("(minutes must be below 60)"));
  EXPECT_THAT(part("MaxTime", "1-24"), HasSubstr("(hours must be below 24 after a day count)"));
  // Slurm's own arithmetic wraps around beyond 35791393 minutes.
  EXPECT_THAT(part("MaxTime", "35791394"), HasSubstr("(longer than 35791393 minutes)"));
  EXPECT_THAT(part("MaxTime", "24855-03:14:00"), HasSubstr("longer than"));
  for (const char* bad : {"1:2:3:4", "1-", "-1", "1--1", "1-2-3", ":30", "30:", "1::2", "abc", "1h",
                          "1.5", "+30", "1-1:2:3:4", "9999999999", ""}) {
    EXPECT_THAT(part("MaxTime", bad), StartsWith("error: MaxTime must be a time")) << bad;
  }
}

// ---- kPath ----

TEST(SlurmParamsPath, AbsolutePathsOfATightCharacterSet) {
  EXPECT_EQ(conf("Prolog", "/etc/slurm/prolog.d/10-gpu_check+v2.sh"),
            "/etc/slurm/prolog.d/10-gpu_check+v2.sh");
  std::string longest = "/" + std::string(254, 'a');
  EXPECT_EQ(conf("Epilog", longest), longest);
  EXPECT_THAT(conf("Epilog", longest + "a"), HasSubstr("(longer than 255 characters)"));
  EXPECT_THAT(conf("Prolog", "/etc/../bin/sh"), HasSubstr("(\"..\" is not allowed)"));
  EXPECT_THAT(conf("Prolog", "/etc/x/.."), HasSubstr("not allowed"));
  for (const char* bad :
       {"etc/slurm/prolog", "./prolog", "~/prolog", "/x;reboot", "/x$(id)", "/x`id`", "/x|sh",
        "/x&", "/a\"b", "/a'b", "/a\\b", "/a*", "/a=b", "/a,b", ""}) {
    EXPECT_THAT(conf("TaskProlog", bad), StartsWith("error: TaskProlog must be an absolute path"))
        << bad;
  }
}

// ---- kOptions ----

TEST(SlurmParamsOptions, NamesWithOptionalValues) {
  EXPECT_EQ(conf("SchedulerParameters", "bf_continue,bf_max_job_test=500,bf_window=2880"),
            "bf_continue,bf_max_job_test=500,bf_window=2880");
  EXPECT_EQ(conf("SchedulerParameters", "sched_interval=60,bf_yield_sleep=500000,x=a.b:c/d+e-f"),
            "sched_interval=60,bf_yield_sleep=500000,x=a.b:c/d+e-f");
  std::string longest = "a=" + std::string(1022, 'b');
  EXPECT_EQ(conf("SchedulerParameters", longest), longest);
  EXPECT_THAT(conf("SchedulerParameters", longest + "b"),
              HasSubstr("(longer than 1024 characters)"));
  EXPECT_THAT(conf("SchedulerParameters", "bf_continue,BF_CONTINUE"),
              HasSubstr("(\"BF_CONTINUE\" is given twice)"));
  EXPECT_THAT(conf("SchedulerParameters", "bf_window=1,bf_window=2"), HasSubstr("given twice"));
  EXPECT_THAT(conf("SchedulerParameters", "bf-continue"),
              HasSubstr("(\"bf-continue\" is not of that form)"));
  for (const char* bad :
       {"=5", "a=", "a=b=c", "a=\"x\"", "a=$HOME", "a,,b", "a,", "a;b", "a=(b)", "a=b,c=", ""}) {
    EXPECT_THAT(conf("SchedulerParameters", bad),
                StartsWith("error: SchedulerParameters must be a comma-separated list of NAME"))
        << bad;
  }
}

// ---- kTresWeights ----

TEST(SlurmParamsTresWeights, TresNamesWithDecimalWeights) {
  EXPECT_EQ(conf("PriorityWeightTRES", "CPU=1000,Mem=2000,GRES/gpu=3000"),
            "CPU=1000,Mem=2000,GRES/gpu=3000");
  EXPECT_EQ(conf("PriorityWeightTRES", "gres/gpu:a100=2.25,cpu=-1.5"),
            "gres/gpu:a100=2.25,cpu=-1.5");
  EXPECT_EQ(conf("PriorityWeightTRES", "CPU=4294967295"), "CPU=4294967295");
  EXPECT_THAT(conf("PriorityWeightTRES", "CPU=1,cpu=2"), HasSubstr("(\"cpu=2\" is given twice)"));
  EXPECT_THAT(conf("PriorityWeightTRES", "CPU"), HasSubstr("(\"CPU\" is not of that form)"));
  for (const char* bad : {"CPU=", "=1", "CPU=abc", "CPU=1e3", "CPU=1.", "CPU=.5", "CPU=1.2.3",
                          "CPU=+1", "CPU=4294967296", "CPU=1=2", "C*U=1", "CPU=1,", ""}) {
    EXPECT_THAT(conf("PriorityWeightTRES", bad),
                StartsWith("error: PriorityWeightTRES must be a comma-separated list of "
                           "TRES=WEIGHT"))
        << bad;
  }
}

// ---- kNameList ----

TEST(SlurmParamsNameList, AllOrDistinctNames) {
  EXPECT_EQ(part("AllowAccounts", "all"), "ALL");
  EXPECT_EQ(part("AllowGroups", "ALL"), "ALL");
  EXPECT_EQ(part("AllowQos", "normal,high-prio,team_1,v1.2"), "normal,high-prio,team_1,v1.2");
  EXPECT_EQ(part("DenyAccounts", "Physics,physics"), "Physics,physics") << "names keep case";
  EXPECT_THAT(part("AllowGroups", "ALL,wheel"),
              HasSubstr("(ALL cannot be combined with other entries)"));
  EXPECT_THAT(part("AllowAccounts", "a,a"), HasSubstr("(\"a\" is given twice)"));
  EXPECT_THAT(part("DenyQos", "a/b"), HasSubstr("(\"a/b\" is not a valid name)"));
  for (const char* bad : {"a,,b", "a,", "a;b", "$(id)", "a:b", "a+b", ""}) {
    EXPECT_THAT(part("AllowAccounts", bad), StartsWith("error: AllowAccounts must be ALL or"))
        << bad;
  }
}

// ---- Injection ----

TEST(SlurmParamsInjection, NoValueCanEndItsLineOrParameter) {
  const std::string nul("\0", 1);
  std::vector<std::string> separators = {"\n", "\r",   " ",  "\t", "#",
                                         nul,  "\x7f", "\v", "\f", "\xc2\xa0"};
  for (const ParamDef* def : allDefs()) {
    std::string good = sampleValue(*def);
    ASSERT_EQ(outcome(checkParamValue(*def, good)), good) << def->name;
    for (const auto& sep : separators) {
      for (const std::string& bad : {good + sep + "SlurmUser=evil", sep + good, good + sep, sep}) {
        auto r = checkParamValue(*def, bad);
        ASSERT_FALSE(r.isOk()) << def->name << " accepted " << bad;
        EXPECT_THAT(r.status().message(), StartsWith(def->name + " must be "));
        EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
      }
    }
  }
}

TEST(SlurmParamsInjection, MessagesShowControlCharactersVisibly) {
  EXPECT_EQ(assignConf("MinJobAge=300\nSlurmUser=evil"),
            "error: MinJobAge must be an integer from 2 to 86400, got "
            "\"300\\x0aSlurmUser=evil\" (newlines, control characters, blanks, '#' and "
            "non-ASCII are not allowed)");
  EXPECT_THAT(assignConf("MinJobAge=300 SlurmUser=evil"),
              HasSubstr("got \"300 SlurmUser=evil\" (newlines, control characters, blanks"));
  EXPECT_THAT(assignConf("MinJobAge=300\r"), HasSubstr("\"300\\x0d\""));
  EXPECT_THAT(assignConf("MinJobAge=300\t"), HasSubstr("\"300\\x09\""));
  EXPECT_THAT(assignConf("MinJobAge=300#x"), HasSubstr("\"300#x\""));
  EXPECT_THAT(assignConf(std::string("MinJobAge=300\0x", 15)), HasSubstr("\"300\\x00x\""));
  EXPECT_THAT(assignConf("Prolog=/bin/true\nInclude /tmp/evil.conf"), StartsWith("error:"));
  EXPECT_THAT(assignConf("SchedulerParameters=bf_continue\nSlurmUser=evil"), StartsWith("error:"));
}

// ---- parseAssignment ----

TEST(SlurmParamsParseAssignment, NormalisesKeyAndValue) {
  EXPECT_EQ(assignConf("minjobage=0300"), "MinJobAge=300");
  EXPECT_EQ(assignConf("SCHEDULERTYPE=SCHED/BUILTIN"), "SchedulerType=sched/builtin");
  EXPECT_EQ(assignConf("debugflags=backfill,backfillmap"), "DebugFlags=Backfill,BackfillMap");
  // Only the first '=' separates key from value.
  EXPECT_EQ(assignConf("SchedulerParameters=bf_window=2880"), "SchedulerParameters=bf_window=2880");
  EXPECT_EQ(assign(partitionParams(), "maxtime=1-00:00:00"), "MaxTime=1-00:00:00");
  EXPECT_EQ(assign(partitionParams(), "oversubscribe=exclusive"), "OverSubscribe=EXCLUSIVE");
}

TEST(SlurmParamsParseAssignment, RefusesMalformedAssignments) {
  EXPECT_EQ(assignConf("MinJobAge"), "error: expected Key=Value, got \"MinJobAge\"");
  EXPECT_EQ(assignConf("=300"), "error: expected Key=Value, got \"=300\"");
  EXPECT_EQ(assignConf(""), "error: expected Key=Value, got \"\"");
  EXPECT_EQ(assignConf("MinJobAge="),
            "error: MinJobAge must be an integer from 2 to 86400, got \"\" (the value is empty)");
}

TEST(SlurmParamsParseAssignment, UnknownKeysPointToTheList) {
  for (const char* key : {"SlurmUser", "ControlMachine", "AuthType", "SelectTypeParameters",
                          "PartitionName", "NodeName", "Include"}) {
    std::string r = assignConf(std::string(key) + "=x");
    EXPECT_THAT(r, StartsWith("error: \"" + std::string(key) +
                              "\" is not a parameter corral lets users set"));
    EXPECT_THAT(r, HasSubstr("`corral config params`"));
  }
  EXPECT_EQ(assignConf("SlurmUser=root"),
            "error: \"SlurmUser\" is not a parameter corral lets users set; `corral config "
            "params` lists those it does");
  EXPECT_THAT(assignConf("MinJob=5"), HasSubstr("; did you mean MinJobAge?;"));
  EXPECT_THAT(assignConf("MinJobAge =300"), HasSubstr("did you mean MinJobAge?"));
  EXPECT_THAT(assignConf("SchedulerParams=bf_continue"),
              HasSubstr("did you mean SchedulerType, SchedulerParameters?"));
  // At most five suggestions.
  EXPECT_THAT(assignConf("PriorityWeight=1"),
              HasSubstr("did you mean PriorityWeightAge, PriorityWeightFairshare, "
                        "PriorityWeightJobSize, PriorityWeightPartition, PriorityWeightQOS?"));
  EXPECT_THAT(assign(partitionParams(), "Nodes=n1"),
              StartsWith("error: \"Nodes\" is not a parameter corral lets users set"));
  EXPECT_THAT(assign(partitionParams(), "MinJobAge=300"), Not(HasSubstr("did you mean")));
  EXPECT_THAT(assignConf("Min\nJobAge=300"), StartsWith("error: \"Min\\x0aJobAge\" is not"));
}

// ---- Combinations ----

TEST(SlurmParamsCombination, PreemptTypeAndModeMustAgree) {
  using Conf = std::map<std::string, std::string>;
  EXPECT_TRUE(checkSlurmConfCombination({}).isOk());
  EXPECT_TRUE(checkSlurmConfCombination({{"PreemptMode", "GANG"}}).isOk());
  EXPECT_TRUE(checkSlurmConfCombination({{"PreemptMode", "OFF,GANG"}}).isOk());
  for (const Conf& good :
       {Conf{{"PreemptType", "preempt/partition_prio"}, {"PreemptMode", "REQUEUE"}},
        Conf{{"PreemptType", "preempt/qos"}, {"PreemptMode", "SUSPEND,GANG"}},
        Conf{{"PreemptType", "preempt/qos"}, {"PreemptMode", "WITHIN,CANCEL"}},
        Conf{{"PreemptType", "preempt/none"}, {"PreemptMode", "OFF"}}}) {
    EXPECT_TRUE(checkSlurmConfCombination(good).isOk()) << good.at("PreemptMode");
  }
  EXPECT_EQ(checkSlurmConfCombination({{"PreemptType", "preempt/qos"}, {"PreemptMode", "SUSPEND"}})
                .message(),
            "PreemptMode=SUSPEND needs GANG too, to resume suspended jobs: set "
            "PreemptMode=SUSPEND,GANG");
  EXPECT_THAT(checkSlurmConfCombination({{"PreemptMode", "CANCEL"}}).message(),
              HasSubstr("needs PreemptType=preempt/partition_prio or preempt/qos"));
  EXPECT_THAT(checkSlurmConfCombination({{"PreemptMode", "WITHIN"}}).message(),
              HasSubstr("needs PreemptType"));
  EXPECT_THAT(checkSlurmConfCombination({{"PreemptType", "preempt/qos"}}).message(),
              HasSubstr("PreemptType=preempt/qos needs a PreemptMode that says how to preempt"));
  EXPECT_THAT(checkSlurmConfCombination({{"PreemptType", "preempt/qos"}, {"PreemptMode", "WITHIN"}})
                  .message(),
              HasSubstr("(PreemptMode is WITHIN)"));
  EXPECT_EQ(checkSlurmConfCombination({{"PreemptMode", "CANCEL"}}).code(), Code::kInvalidArgument);
}

TEST(SlurmParamsCombination, PairsSlurmWouldHalfApply) {
  EXPECT_EQ(
      checkSlurmConfCombination({{"DefMemPerCPU", "100"}, {"DefMemPerNode", "200"}}).message(),
      "DefMemPerCPU and DefMemPerNode cannot both be set: Slurm uses only one of them; "
      "unset one");
  EXPECT_FALSE(
      checkSlurmConfCombination({{"MaxMemPerCPU", "1"}, {"MaxMemPerNode", "INFINITE"}}).isOk());
  EXPECT_FALSE(checkSlurmConfCombination(
                   {{"PropagateResourceLimits", "CORE"}, {"PropagateResourceLimitsExcept", "AS"}})
                   .isOk());
  EXPECT_TRUE(
      checkSlurmConfCombination({{"DefMemPerCPU", "100"}, {"MaxMemPerNode", "200"}}).isOk());
  EXPECT_THAT(checkPartitionCombination({{"AllowAccounts", "a"}, {"DenyAccounts", "b"}}).message(),
              StartsWith("AllowAccounts and DenyAccounts cannot both be set"));
  EXPECT_FALSE(checkPartitionCombination({{"AllowQos", "a"}, {"DenyQos", "b"}}).isOk());
  EXPECT_FALSE(checkPartitionCombination({{"DefMemPerCPU", "1"}, {"DefMemPerNode", "2"}}).isOk());
  EXPECT_TRUE(checkPartitionCombination({{"AllowAccounts", "a"}, {"DenyQos", "b"}}).isOk());
  EXPECT_TRUE(checkPartitionCombination({}).isOk());
}

}  // namespace
}  // namespace corral
