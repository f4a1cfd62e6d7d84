#include "cli/command.h"

#include <cstdlib>

namespace corral {
namespace {

// CLI11's own PositiveNumber prints its upper bound as a 300-digit number.
const CLI::Validator kPositiveSeconds(
    [](std::string& s) {
      char* end = nullptr;
      long v = std::strtol(s.c_str(), &end, 10);
      bool ok = !s.empty() && end != nullptr && *end == '\0' && v > 0;
      return ok ? std::string() : "must be a positive number of seconds, not " + s;
    },
    "SECONDS>0", "positive-seconds");

std::string keyValueProblem(const std::string& arg) {
  size_t eq = arg.find('=');
  if (eq == std::string::npos) {
    return "\"" + arg + "\" is not Key=Value; write it as " + arg + "=VALUE";
  }
  if (eq == 0) return "\"" + arg + "\" has no key before '='; write it as Key=Value";
  return "";
}

}  // namespace

CLI::Option* addOutputOption(CLI::App* cmd, OutputFormat* format) {
  return cmd
      ->add_option_function<std::string>(
          "-o,--output",
          [format](const std::string& s) {
            *format = s == "json" ? OutputFormat::kJson : OutputFormat::kTable;
          },
          "Output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->default_str("table");
}

CLI::Option* addNameArgument(CLI::App* cmd, std::string* name, const std::string& label,
                             const std::string& help) {
  return cmd->add_option(label, *name, help)
      ->required()
      ->check(CLI::Validator(
          [](std::string& s) { return s.empty() ? std::string("must not be empty") : ""; }, "",
          "non-empty"));
}

CLI::Option* addSshKeyOption(CLI::App* cmd, std::vector<std::string>* files,
                             const std::string& help) {
  return cmd->add_option("--ssh-key", *files, help)->type_name("FILE")->allow_extra_args(false);
}

CLI::Option* addTimeoutOption(CLI::App* cmd, int* seconds, const std::string& help) {
  return cmd->add_option("--timeout", *seconds, help)
      ->check(kPositiveSeconds)
      ->capture_default_str();
}

void addChangeWaitOptions(CLI::App* cmd, ChangeWait* wait) {
  // Changes wait by default; --wait says so explicitly, as on the commands
  // that do not, so that either flag works everywhere.
  cmd->add_flag("--no-wait,!--wait", wait->noWait,
                "Return once corrald has accepted the change instead of waiting until it is "
                "applied (--wait: wait, the default)");
  addTimeoutOption(cmd, &wait->timeoutSeconds, "Seconds to wait for the change to be applied");
}

FollowOptions followOptions(const ChangeWait& wait, OutputFormat format) {
  return {!wait.noWait, wait.timeoutSeconds, format, ""};
}

const CLI::Validator& keyValueValidator() {
  // No description: the argument's type name already says Key=Value.
  static const CLI::Validator v([](std::string& s) { return keyValueProblem(s); }, "", "key-value");
  return v;
}

StatusOr<std::pair<std::string, std::string>> parseKeyValue(const std::string& arg) {
  if (std::string problem = keyValueProblem(arg); !problem.empty()) {
    return invalidArgument(problem);
  }
  size_t eq = arg.find('=');
  return std::make_pair(arg.substr(0, eq), arg.substr(eq + 1));
}

Status alreadyReported() { return Status(Code::kFailedPrecondition, ""); }

bool isAlreadyReported(const Status& status) { return !status.isOk() && status.message().empty(); }

}  // namespace corral
