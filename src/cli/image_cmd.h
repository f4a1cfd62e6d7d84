#pragma once

// `corral image list|get`: the cluster images corrald offers (the Slurm
// stack a cluster's nodes run, not a job's container image). Operators
// build images on the host with `corrald image build`.

#include <CLI/CLI.hpp>
#include <string>

#include "cli/client.h"
#include "cli/command.h"
#include "cli/context.h"
#include "cli/output.h"
#include "corral/status.h"

namespace corral {

void addImageCommands(CLI::App& app, Command& chosen);

// NAME, SLURM, OS, SIZE, BUILT and the clusters using each; the default is
// marked with a star.
std::string imageTable(const Json& body);

}  // namespace corral
