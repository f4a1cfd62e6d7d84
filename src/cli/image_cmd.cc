#include "cli/image_cmd.h"

#include <cstdio>
#include <memory>
#include <ostream>

namespace corral {
namespace {

std::string sizeText(int64_t bytes) {
  if (bytes <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f MiB", static_cast<double>(bytes) / (1024 * 1024));
  return buf;
}

}  // namespace

std::string imageTable(const Json& body) {
  const Json& images = jsonChild(body, "images");
  if (!images.is_array() || images.empty()) return "No cluster images.\n";
  std::string def = jsonString(body, "default");
  std::vector<std::vector<std::string>> rows = {{"NAME", "SLURM", "OS", "SIZE", "BUILT", "CLUSTERS"}};
  for (const Json& i : images) {
    std::string name = jsonString(i, "name");
    std::string clusters;
    const Json& users = jsonChild(i, "clusters");
    if (users.is_array())
      for (const Json& c : users)
        if (c.is_string()) clusters += (clusters.empty() ? "" : ",") + c.get<std::string>();
    rows.push_back({name + (name == def ? " *" : ""), jsonString(i, "slurmVersion"),
                    jsonString(i, "os"), sizeText(jsonInt(i, "sizeBytes")),
                    i.value("built", false) ? "yes" : "no", clusters.empty() ? "-" : clusters});
  }
  return renderTable(rows) + "* the default for `corral cluster create` without --image\n";
}

void addImageCommands(CLI::App& app, Command& chosen) {
  CLI::App* image = app.add_subcommand(
      "image", "The cluster images: the Slurm stack a cluster's nodes run");
  image->require_subcommand(1);
  auto format = std::make_shared<OutputFormat>(OutputFormat::kTable);
  CLI::App* list = image->add_subcommand("list", "List the images, built or not, and who uses them");
  addOutputOption(list, format.get());
  list->callback([format, &chosen] {
    chosen = [format](ApiClient& api, CliContext& ctx) -> Status {
      ASSIGN_OR_RETURN(Json body, api.listImages());
      *ctx.out << (*format == OutputFormat::kJson ? renderJson(body) : imageTable(body));
      return Status::ok();
    };
  });
  auto name = std::make_shared<std::string>();
  CLI::App* get = image->add_subcommand("get", "Show one image: its packages and builds");
  get->add_option("name", *name, "Image name")->required();
  addOutputOption(get, format.get());
  get->callback([name, format, &chosen] {
    chosen = [name, format](ApiClient& api, CliContext& ctx) -> Status {
      ASSIGN_OR_RETURN(Json i, api.getImage(*name));
      if (*format == OutputFormat::kJson) {
        *ctx.out << renderJson(i);
        return Status::ok();
      }
      std::string packages;
      if (const Json& p = jsonChild(i, "packages"); p.is_array())
        for (const Json& x : p)
          if (x.is_string()) packages += (packages.empty() ? "" : " ") + x.get<std::string>();
      *ctx.out << renderFields({{"Name", jsonString(i, "name")},
                                {"Description", jsonString(i, "description")},
                                {"OS", jsonString(i, "os")},
                                {"Slurm", jsonString(i, "slurmVersion") +
                                              (jsonString(i, "slurmPackage").empty()
                                                   ? ""
                                                   : " (" + jsonString(i, "slurmPackage") + ")")},
                                {"Build", jsonString(i, "id").substr(0, 12)},
                                {"Built", i.value("built", false) ? "yes, " + sizeText(jsonInt(i, "sizeBytes"))
                                                                  : "no (built at the first create)"},
                                {"Extends", jsonString(i, "base").empty() ? "-" : jsonString(i, "base")},
                                {"Packages", packages}});
      return Status::ok();
    };
  });
}

}  // namespace corral
