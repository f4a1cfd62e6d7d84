#pragma once

// Slurm's major releases ("22.05", "24.11", "26.05"): which ones corral renders for,
// and Slurm's rules for moving a cluster from one to another in place.

#include <string>
#include <vector>

#include "corral/status.h"

namespace corral {

// The releases corral renders configuration and builds its SPANK plugin
// for, oldest first. An image must hold one of them.
const std::vector<std::string>& supportedSlurmReleases();

// Whether `release` is one of `supportedSlurmReleases()`; the error lists them.
Status checkSupportedSlurmRelease(const std::string& release);

// Every Slurm major release from 20.11 on, in order (the upgrade rule
// counts releases, not years).
const std::vector<std::string>& slurmReleaseHistory();

// Whether a running cluster may move from release `from` to `to` in place,
// keeping its queue and accounting (Slurm's upgrade guide): never
// backwards, and at most two releases ahead (three for a target of 24.11 or
// later). FailedPrecondition says why not and what to do instead.
Status checkSlurmUpgrade(const std::string& from, const std::string& to);

// Negative, zero or positive as `a` is older than, the same as or newer
// than `b` (both "YY.MM").
int compareSlurmReleases(const std::string& a, const std::string& b);

}  // namespace corral
