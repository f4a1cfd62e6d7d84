#include "cli/events_cmd.h"

#include <ostream>

namespace corral {

Status showEvents(ApiClient& api, CliContext& ctx, const std::string& name, OutputFormat format) {
  ASSIGN_OR_RETURN(Json body, api.listEvents(name));
  *ctx.out << (format == OutputFormat::kJson ? renderJson(body) : eventsTable(body));
  return Status::ok();
}

}  // namespace corral
