#include "health/agent.h"

#include "health/report.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <nlohmann/json.hpp>

#include "common/files.h"
#include "common/log.h"

namespace corral {
namespace {

// A tick reads at most this much of a log file; the rest waits for the next.
constexpr size_t kMaxReadPerTick = 1 << 20;
// A "line" this long without a newline is not a kernel message: it is skipped
// rather than held forever waiting for its end.
constexpr size_t kMaxLineLength = 64 << 10;
// /dev/kmsg records one tick takes at most, so that a flood cannot starve the
// rest of the tick.
constexpr int kMaxRecordsPerTick = 10000;
// How much of a log line the report quotes.
constexpr size_t kMaxQuotedLine = 512;
// How long one `scontrol` may take: slurmctld answers in well under a second
// when it is up, and the agent must keep ticking when it is not.
constexpr std::chrono::seconds kScontrolTimeout{10};

std::string_view trimView(std::string_view s) {
  while (!s.empty() &&
         (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// The first line of `s`, trimmed and cut to `max` bytes: for quoting a
// command's stderr in one report field.
std::string firstLine(std::string_view s, size_t max = 160) {
  s = trimView(s);
  s = s.substr(0, s.find('\n'));
  std::string out(trimView(s));
  if (out.size() > max) out.resize(max);
  return out;
}

// A file that kernel log lines are appended to (a pod's injected "kmsg").
class FileLogReader : public KernelLogReader {
 public:
  explicit FileLogReader(std::string path) : path_(std::move(path)) {}

  std::vector<std::string> readNewLines() override {
    std::vector<std::string> lines;
    int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return lines;  // Not there yet (or gone): nothing new.
    struct stat st {};
    if (fstat(fd, &st) != 0) {
      close(fd);
      return lines;
    }
    // A different file at the same path (recreated or renamed over) and a
    // truncated one are both read from their start.
    if (!seen_ || st.st_dev != dev_ || st.st_ino != ino_) {
      seen_ = true;
      dev_ = st.st_dev;
      ino_ = st.st_ino;
      offset_ = 0;
    }
    if (static_cast<uint64_t>(st.st_size) < offset_) offset_ = 0;

    std::string buf;
    buf.resize(std::min<uint64_t>(kMaxReadPerTick, static_cast<uint64_t>(st.st_size) - offset_));
    size_t got = 0;
    while (got < buf.size()) {
      ssize_t n = pread(fd, buf.data() + got, buf.size() - got, static_cast<off_t>(offset_ + got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    close(fd);
    buf.resize(got);

    size_t end = buf.rfind('\n');
    if (end == std::string::npos) {
      if (buf.size() >= kMaxLineLength) {
        LOG_WARN(path_ << ": skipping " << buf.size() << " bytes without a newline");
        offset_ += buf.size();
      }
      return lines;
    }
    std::string_view complete(buf.data(), end + 1);
    offset_ += complete.size();
    while (!complete.empty()) {
      size_t nl = complete.find('\n');
      lines.emplace_back(complete.substr(0, nl));
      complete.remove_prefix(nl + 1);
    }
    return lines;
  }

 private:
  std::string path_;
  bool seen_ = false;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  uint64_t offset_ = 0;
};

// The kernel's ring buffer: each read(2) returns one record,
// "PRIO,SEQ,USEC,FLAGS;MESSAGE\n" followed by " KEY=VALUE\n" continuation
// lines.
class DevKmsgReader : public KernelLogReader {
 public:
  explicit DevKmsgReader(std::string path) : path_(std::move(path)) {}
  ~DevKmsgReader() override {
    if (fd_ >= 0) close(fd_);
  }
  DevKmsgReader(const DevKmsgReader&) = delete;
  DevKmsgReader& operator=(const DevKmsgReader&) = delete;

  std::vector<std::string> readNewLines() override {
    std::vector<std::string> lines;
    if (fd_ < 0 && !openAtEnd()) return lines;
    char buf[8192];
    for (int records = 0; records < kMaxRecordsPerTick; ++records) {
      ssize_t n = read(fd_, buf, sizeof buf);
      if (n > 0) {
        std::string_view rec(buf, static_cast<size_t>(n));
        lines.emplace_back(rec.substr(0, rec.find('\n')));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      // EPIPE: records were overwritten before we read them; the next read
      // returns the oldest one still there.
      if (n < 0 && errno == EPIPE) continue;
      if (n < 0 && errno != EAGAIN) {
        LOG_WARN("reading " << path_ << ": " << std::strerror(errno) << "; reopening");
        close(fd_);
        fd_ = -1;
      }
      break;
    }
    return lines;
  }

 private:
  bool openAtEnd() {
    fd_ = open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) {
      if (!warned_) LOG_WARN("cannot open " << path_ << ": " << std::strerror(errno));
      warned_ = true;
      return false;
    }
    // Only messages from now on: the agent must not act on XIDs a previous
    // boot of the node (or a previous agent) already handled.
    lseek(fd_, 0, SEEK_END);
    warned_ = false;
    return true;
  }

  std::string path_;
  int fd_ = -1;
  bool warned_ = false;
};

bool writeFileAtomic(const std::string& path, const std::string& data, std::string& error) {
  std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = "cannot create " + tmp + ": " + std::strerror(errno);
    return false;
  }
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = "cannot write " + tmp + ": " + std::strerror(errno);
      close(fd);
      unlink(tmp.c_str());
      return false;
    }
    done += static_cast<size_t>(n);
  }
  if (close(fd) != 0 || rename(tmp.c_str(), path.c_str()) != 0) {
    error = "cannot replace " + path + ": " + std::strerror(errno);
    unlink(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace

bool pidFileProcessAlive(const std::string& pidFile) {
  auto text = readFile(pidFile);
  if (!text.isOk()) return false;
  std::string_view s = trimView(*text);
  long pid = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), pid);
  if (ec != std::errc() || end != s.data() + s.size() || pid <= 0) return false;
  // EPERM means the process exists but belongs to someone else.
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

std::unique_ptr<KernelLogReader> openKernelLog(const std::string& path) {
  if (path == "/dev/kmsg") return std::make_unique<DevKmsgReader>(path);
  return std::make_unique<FileLogReader>(path);
}

SlurmNodeState parseScontrolNode(const std::string& oneLiner) {
  SlurmNodeState out;
  std::string_view s = oneLiner;
  s = s.substr(0, s.find('\n'));
  // `key` at the start of the line or after a space, so that "State=" does
  // not match "NextState=".
  auto find = [&](std::string_view key) -> size_t {
    for (size_t at = s.find(key); at != std::string_view::npos; at = s.find(key, at + 1))
      if (at == 0 || s[at - 1] == ' ') return at + key.size();
    return std::string_view::npos;
  };
  if (size_t at = find("State="); at != std::string_view::npos)
    out.state = std::string(s.substr(at, s.find(' ', at) - at));
  if (size_t at = find("Reason="); at != std::string_view::npos) {
    // The reason has spaces of its own; it runs to the end of the line or to
    // the optional fields Slurm prints after it.
    std::string_view r = s.substr(at);
    for (std::string_view next :
         {" Comment=", " Extra=", " InstanceId=", " InstanceType=", " ReservationName="}) {
      if (size_t cut = r.find(next); cut != std::string_view::npos) r = r.substr(0, cut);
    }
    r = trimView(r);
    // Slurm appends " [user@time]" to the reason it was given.
    if (!r.empty() && r.back() == ']') {
      size_t open = r.rfind(" [");
      if (open != std::string_view::npos && r.find('@', open) != std::string_view::npos)
        r = trimView(r.substr(0, open));
    }
    out.reason = std::string(r);
  }
  return out;
}

HealthAgent::HealthAgent(HealthAgentOptions options, ProcessRunner& runner, Clock& clock,
                         ProcessAliveCheck slurmdAlive)
    : HealthAgent(options, runner, clock, std::move(slurmdAlive), openKernelLog(options.kmsgPath)) {
}

HealthAgent::HealthAgent(HealthAgentOptions options, ProcessRunner& runner, Clock& clock,
                         ProcessAliveCheck slurmdAlive, std::unique_ptr<KernelLogReader> log)
    : options_(std::move(options)),
      runner_(runner),
      clock_(clock),
      slurmdAlive_(std::move(slurmdAlive)),
      log_(std::move(log)) {}

void HealthAgent::tick() {
  try {
    for (const auto& line : log_->readNewLines())
      if (auto e = parseXidLine(line)) record(*e);
    tryDrain();
    writeReport();
  } catch (const std::exception& e) {
    // Nothing here throws by design; an allocation failure or an injected
    // dependency might. The next tick starts afresh.
    LOG_ERROR("health tick failed: " << e.what());
  }
}

void HealthAgent::record(const XidEvent& e) {
  Entry entry;
  entry.time = clock_.unixMillis();
  entry.event = e;
  entry.cls = classifyXid(e.code);
  if (entry.cls == XidClass::kHardware) {
    sawHardwareXid_ = true;
    entry.action = "drain pending";
    entry.awaitingDrain = true;
    // The first hardware XID is usually the cause and those after it its
    // consequences: a pending drain keeps naming the first.
    if (!pendingDrain_) {
      pendingDrain_ = e;
      nextDrainAttempt_ = clock_.now();
    }
  } else {
    entry.action = "reported";
  }
  LOG_WARN("GPU XID " << e.code << " (" << xidClassName(entry.cls) << ": " << xidDescription(e.code)
                      << ") on " << e.pci << ": " << e.line);
  entries_.push_back(std::move(entry));
  while (entries_.size() > kMaxReportedXids) entries_.pop_front();
}

void HealthAgent::tryDrain() {
  if (!pendingDrain_ || clock_.now() < nextDrainAttempt_) return;
  bool done = false;
  std::string action = drain(*pendingDrain_, done);
  for (auto& entry : entries_) {
    if (!entry.awaitingDrain) continue;
    entry.action = done ? action : action + " (retrying)";
    entry.awaitingDrain = !done;
  }
  if (done) {
    LOG_INFO("node " << options_.nodeName << ": " << action);
    pendingDrain_.reset();
  } else {
    LOG_WARN("node " << options_.nodeName << ": " << action << "; retrying in "
                     << kDrainRetry.count() << " ms");
    nextDrainAttempt_ = clock_.now() + kDrainRetry;
  }
}

std::string HealthAgent::drain(const XidEvent& cause, bool& done) {
  done = false;
  ProcessOptions po;
  po.timeout = kScontrolTimeout;
  auto failure = [](const char* what, const StatusOr<ProcessResult>& r) {
    std::string why;
    if (!r.isOk())
      why = r.status().message();
    else if (r->timedOut)
      why = "timed out";
    else
      why = "exit " + std::to_string(r->exitCode) + ": " + firstLine(r->err);
    return std::string("scontrol error: ") + what + ": " + why;
  };

  auto show = runner_.run({"scontrol", "show", "node", options_.nodeName, "-o"}, po);
  if (!show.isOk() || show->exitCode != 0) return failure("show node", show);
  SlurmNodeState node = parseScontrolNode(show->out);
  if (node.state.find("DRAIN") != std::string::npos &&
      node.reason.rfind(kCorralReasonPrefix, 0) != 0) {
    // An administrator took the node out for their own reason; theirs is the
    // one that must be seen, and resuming the node stays their call.
    done = true;
    return "kept admin drain (Reason=" + firstLine(node.reason, 100) + ")";
  }
  auto update = runner_.run({"scontrol", "update", "nodename=" + options_.nodeName, "state=drain",
                             "reason=" + xidDrainReason(cause)},
                            po);
  if (!update.isOk() || update->exitCode != 0) return failure("update", update);
  done = true;
  return "drained";
}

void HealthAgent::writeReport() {
  HealthReport report;
  report.node = options_.nodeName;
  report.slurmdOk = slurmdAlive_ && slurmdAlive_(options_.slurmdPidFile);
  report.gpuOk = !sawHardwareXid_;
  for (const auto& entry : entries_) {
    std::string line = entry.event.line;
    if (line.size() > kMaxQuotedLine) line.resize(kMaxQuotedLine);
    report.xids.push_back({entry.time, entry.event.code, entry.event.pci, xidClassName(entry.cls),
                           xidDescription(entry.event.code), entry.action, line});
  }
  // What changed is compared without the time, which every write renews.
  std::string content = healthReportJson(report, -1);
  report.time = clock_.unixMillis();
  lastReportText_ = healthReportJson(report) + "\n";

  auto now = clock_.now();
  if (content == lastContent_ && lastWrite_ && now - *lastWrite_ < kReportRefresh) return;
  std::string error;
  if (!writeFileAtomic(options_.reportPath, lastReportText_, error)) {
    // Left unrecorded, so that the next tick tries again.
    if (error != lastWriteError_) LOG_WARN(error);
    lastWriteError_ = error;
    return;
  }
  lastWriteError_.clear();
  lastContent_ = std::move(content);
  lastWrite_ = now;
  ++reportWrites_;
}

}  // namespace corral
