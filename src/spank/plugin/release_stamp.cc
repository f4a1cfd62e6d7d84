// Which Slurm release a build of corral's SPANK plugin is for. Slurm refuses
// a SPANK plugin whose plugin_version names another major release
// ("Incompatible Slurm plugin version"), so the plugin is linked once per
// supported release with this file compiled for it (CMakeLists.txt). What
// the plugin calls of the SPANK API is the same in every supported release:
// spank.h of 24.11 and 26.05 differs from 22.05's only by
// spank_prepend_task_argv (and, in 26.05, slurm_spank_init_failure_mode),
// which corral does not use.

#ifndef CORRAL_SLURM_VERSION_NUMBER
#error "compile with -DCORRAL_SLURM_VERSION_NUMBER=0xYYMM00 (see CMakeLists.txt)"
#endif

extern "C" const char plugin_name[] = "pyxis";
extern "C" const char plugin_type[] = "spank";
extern "C" const unsigned int plugin_version = CORRAL_SLURM_VERSION_NUMBER;
extern "C" const unsigned int spank_plugin_version = 0;
