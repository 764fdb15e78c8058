// The `mapper` executable: parses the command line (mapper/cli.cpp) and maps UserError to exit 2.
#include "mapper/cli.hpp"

int main(int argc, char** argv) { return npumap::mapper::run_cli(argc, argv); }
