#include "cli/cli.h"

int main(int argc, char** argv) { return corral::runCli(argc, argv); }
