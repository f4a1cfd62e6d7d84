#include "fakes/fake_process_runner.h"

#include <algorithm>

namespace corral {

std::string FakeProcessRunner::Call::line() const {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

std::string FakeProcessRunner::programOf(const std::vector<std::string>& argv) {
  if (argv.empty()) return "";
  auto slash = argv[0].rfind('/');
  return slash == std::string::npos ? argv[0] : argv[0].substr(slash + 1);
}

bool FakeProcessRunner::matches(const std::vector<std::string>& prefix,
                                const std::vector<std::string>& argv) {
  if (prefix.empty() || prefix.size() > argv.size() || prefix[0] != programOf(argv)) return false;
  return std::equal(prefix.begin() + 1, prefix.end(), argv.begin() + 1);
}

StatusOr<ProcessResult> FakeProcessRunner::run(const std::vector<std::string>& argv,
                                               const ProcessOptions& options) {
  if (argv.empty()) return invalidArgument("empty command");
  std::string program = programOf(argv);
  Handler handler;
  {
    std::lock_guard<std::mutex> l(mu_);
    calls_.push_back({argv, options.input});
    for (auto f = prefixFaults_.begin(); f != prefixFaults_.end(); ++f) {
      if (!matches(f->prefix, argv)) continue;
      PrefixFault fault = std::move(*f);
      prefixFaults_.erase(f);
      if (fault.refusal) return *fault.refusal;
      return fault.result;
    }
    if (auto r = refusals_.find(program); r != refusals_.end()) {
      Status s = r->second;
      refusals_.erase(r);
      return s;
    }
    if (auto f = failures_.find(program); f != failures_.end()) {
      ProcessResult res = f->second;
      failures_.erase(f);
      return res;
    }
    if (auto h = handlers_.find(program); h != handlers_.end()) handler = h->second;
  }
  if (handler) return handler(argv, options);
  ProcessResult ok;
  ok.exitCode = 0;
  return ok;
}

void FakeProcessRunner::on(const std::string& program, Handler handler) {
  std::lock_guard<std::mutex> l(mu_);
  handlers_[program] = std::move(handler);
}

void FakeProcessRunner::failNext(const std::string& program, int exitCode, std::string err) {
  std::lock_guard<std::mutex> l(mu_);
  ProcessResult r;
  r.exitCode = exitCode;
  r.err = std::move(err);
  failures_[program] = r;
}

void FakeProcessRunner::refuseNext(const std::string& program, Status status) {
  std::lock_guard<std::mutex> l(mu_);
  refusals_[program] = std::move(status);
}

void FakeProcessRunner::failNextMatching(std::vector<std::string> argvPrefix, int exitCode,
                                         std::string err) {
  std::lock_guard<std::mutex> l(mu_);
  PrefixFault f{std::move(argvPrefix), {}, std::nullopt};
  f.result.exitCode = exitCode;
  f.result.err = std::move(err);
  prefixFaults_.push_back(std::move(f));
}

void FakeProcessRunner::refuseNextMatching(std::vector<std::string> argvPrefix, Status status) {
  std::lock_guard<std::mutex> l(mu_);
  prefixFaults_.push_back({std::move(argvPrefix), {}, std::move(status)});
}

std::vector<FakeProcessRunner::Call> FakeProcessRunner::calls() const {
  std::lock_guard<std::mutex> l(mu_);
  return calls_;
}

std::vector<std::string> FakeProcessRunner::linesOf(const std::string& program) const {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<std::string> out;
  for (const auto& c : calls_)
    if (programOf(c.argv) == program) out.push_back(c.line());
  return out;
}

std::vector<std::string> FakeProcessRunner::lines() const {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<std::string> out;
  for (const auto& c : calls_) out.push_back(c.line());
  return out;
}

}  // namespace corral
