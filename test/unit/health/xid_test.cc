#include "health/xid.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

constexpr const char* kNew =
    "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.";
constexpr const char* kOld =
    "NVRM: Xid (PCI:0000:3b:00): 13, Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): "
    "Illegal Instruction Encoding";

TEST(ParseXidLine, NewFormat) {
  auto e = parseXidLine(kNew);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->pci, "0000:3b:00");
  EXPECT_EQ(e->code, 79);
  EXPECT_EQ(e->pid, "1234");
  EXPECT_EQ(e->process, "python");
  EXPECT_EQ(e->text, "GPU has fallen off the bus.");
  EXPECT_EQ(e->line, kNew);
}

TEST(ParseXidLine, OldFormatKeepsTheWholeTextWithItsCommas) {
  auto e = parseXidLine(kOld);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->pci, "0000:3b:00");
  EXPECT_EQ(e->code, 13);
  EXPECT_EQ(e->pid, "");
  EXPECT_EQ(e->process, "");
  EXPECT_EQ(e->text,
            "Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): Illegal Instruction Encoding");
}

TEST(ParseXidLine, DmesgTimestampPrefix) {
  for (std::string prefix : {"[12345.678901] ", "[    5.123456] ", "[12345.678901]"}) {
    SCOPED_TRACE(prefix);
    auto n = parseXidLine(prefix + kNew);
    ASSERT_TRUE(n.has_value());
    EXPECT_EQ(n->code, 79);
    EXPECT_EQ(n->process, "python");
    EXPECT_EQ(n->line, prefix + kNew);
    auto o = parseXidLine(prefix + kOld);
    ASSERT_TRUE(o.has_value());
    EXPECT_EQ(o->code, 13);
  }
}

TEST(ParseXidLine, KmsgRecordPrefix) {
  auto n = parseXidLine(std::string("6,1234,5678,-;") + kNew);
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->code, 79);
  EXPECT_EQ(n->pci, "0000:3b:00");
  EXPECT_EQ(n->pid, "1234");
  // Newer kernels add fields after the flags.
  auto o = parseXidLine(std::string("4,99,12345678,-,caller=T42;") + kOld);
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->code, 13);
}

TEST(ParseXidLine, TrailingNewlineIsNotPartOfTheLine) {
  auto e = parseXidLine(std::string(kNew) + "\n");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->line, kNew);
  EXPECT_EQ(e->text, "GPU has fallen off the bus.");
}

TEST(ParseXidLine, UnknownPidAndNameAreUnquoted) {
  auto e = parseXidLine(
      "NVRM: Xid (PCI:0000:b1:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double "
      "bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition "
      "0.");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code, 48);
  EXPECT_EQ(e->pci, "0000:b1:00");
  EXPECT_EQ(e->pid, "<unknown>");
  EXPECT_EQ(e->process, "<unknown>");
  EXPECT_EQ(e->text.rfind("An uncorrectable double bit error", 0), 0u);
}

TEST(ParseXidLine, CodeWithNothingAfterIt) {
  auto e = parseXidLine("NVRM: Xid (PCI:0000:3b:00): 79");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code, 79);
  EXPECT_EQ(e->text, "");
}

TEST(ParseXidLine, RejectsOtherNvrmLines) {
  for (const char* line : {
           "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.129.03",
           "NVRM: GPU at PCI:0000:3b:00: GPU-1b2c3d4e-0000-0000-0000-000000000000",
           "NVRM: GPU Board Serial Number: 1234567890",
           "NVRM: Xid (PCI:0000:3b:00): 79",  // Valid: a control for the ones below.
       }) {
    SCOPED_TRACE(line);
    EXPECT_EQ(parseXidLine(line).has_value(), std::string(line).find("Xid") != std::string::npos);
  }
}

TEST(ParseXidLine, RejectsGarbage) {
  for (const char* line : {
           "",
           "\n",
           "hello world",
           "[12345.678901] usb 1-1: new high-speed USB device number 2",
           "6,1234,5678,-;EXT4-fs (sda1): mounted filesystem",
           "NVRM: Xid",
           "NVRM: Xid (PCI:0000:3b:00)",
           "NVRM: Xid (PCI:0000:3b:00): ",
           "NVRM: Xid (PCI:0000:3b:00): abc, GPU has fallen off the bus.",
           "NVRM: Xid (PCI:0000:3b:00): 79x, pid=1",
           "NVRM: Xid (PCI:0000:3b:00): 99999999999999999999, overflow",
           "NVRM: Xid (): 79, empty address",
           "NVRM: Xid (PCI:zz zz): 79, not an address",
           "kernel: something NVRM: Xid (PCI:0000:3b:00): 79, not at the start",
           "[garbage] NVRM: Xid (PCI:0000:3b:00): 79, not a timestamp",
           "x,1,2,-;NVRM: Xid (PCI:0000:3b:00): 79, not a kmsg prefix",
       }) {
    SCOPED_TRACE(line);
    EXPECT_FALSE(parseXidLine(line).has_value());
  }
}

TEST(ClassifyXid, Table) {
  for (int c : {13, 31, 43, 45, 68, 69}) EXPECT_EQ(classifyXid(c), XidClass::kApplication) << c;
  for (int c : {48, 63, 64, 74, 79, 92, 94, 95, 119, 120, 121, 140})
    EXPECT_EQ(classifyXid(c), XidClass::kHardware) << c;
  for (int c : {0, 1, 32, 38, 61, 62, 80, 154, 999})
    EXPECT_EQ(classifyXid(c), XidClass::kUnknown) << c;
  EXPECT_STREQ(xidClassName(XidClass::kApplication), "application");
  EXPECT_STREQ(xidClassName(XidClass::kHardware), "hardware");
  EXPECT_STREQ(xidClassName(XidClass::kUnknown), "unknown");
}

TEST(XidDescription, KnownAndUnknownCodes) {
  EXPECT_STREQ(xidDescription(79), "GPU has fallen off the bus");
  EXPECT_STREQ(xidDescription(48), "double-bit ECC error");
  EXPECT_STREQ(xidDescription(63), "ECC page retirement or row remapping event");
  EXPECT_STREQ(xidDescription(64), "ECC page retirement or row remapper failure");
  EXPECT_STREQ(xidDescription(74), "NVLink error");
  EXPECT_STREQ(xidDescription(92), "high single-bit ECC error rate");
  EXPECT_STREQ(xidDescription(94), "contained ECC error");
  EXPECT_STREQ(xidDescription(95), "uncontained ECC error");
  EXPECT_STREQ(xidDescription(13), "graphics engine exception");
  EXPECT_STREQ(xidDescription(31), "GPU memory page fault");
  EXPECT_STREQ(xidDescription(43), "GPU stopped processing");
  EXPECT_STREQ(xidDescription(45), "preemptive cleanup, due to previous errors");
  EXPECT_STREQ(xidDescription(12345), "unknown XID");
  // Every code corral acts on has a description of its own.
  for (int c : {13, 31, 43, 45, 68, 69, 48, 63, 64, 74, 79, 92, 94, 95, 119, 120, 121, 140})
    EXPECT_STRNE(xidDescription(c), "unknown XID") << c;
}

TEST(XidDrainReason, Text) {
  auto e = parseXidLine(kNew);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(xidDrainReason(*e), "corral: GPU XID 79 on 0000:3b:00 (GPU has fallen off the bus)");
  EXPECT_EQ(xidDrainReason(*e).rfind(kCorralReasonPrefix, 0), 0u);
}

TEST(XidDrainReason, StaysShortAndOnOneLineWhateverTheEventHolds) {
  XidEvent e;
  e.code = 45;  // The longest description.
  e.pci = std::string(500, 'f') + "\n\"evil\" reason=x";
  std::string r = xidDrainReason(e);
  EXPECT_LT(r.size(), kMaxDrainReasonLength);
  EXPECT_EQ(r.rfind(kCorralReasonPrefix, 0), 0u);
  for (char c : r) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << static_cast<int>(c);
  EXPECT_EQ(r.find('='), std::string::npos);

  for (int code : {13, 31, 43, 45, 48, 63, 64, 74, 79, 92, 94, 95, 119, 120, 121, 140, 99999}) {
    XidEvent f;
    f.code = code;
    f.pci = "0000:3b:00.0";
    EXPECT_LT(xidDrainReason(f).size(), kMaxDrainReasonLength) << code;
  }
  XidEvent none;
  none.code = 79;
  EXPECT_EQ(xidDrainReason(none), "corral: GPU XID 79 on unknown GPU (GPU has fallen off the bus)");
}

}  // namespace
}  // namespace corral
