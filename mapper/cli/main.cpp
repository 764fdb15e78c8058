// The `mapper` executable: sets up the process once (logger, SIGINT handler; mapper/cli/process.hpp)
// and runs the command line (mapper/cli/cli.cpp), which maps every error to an exit status.
#include "mapper/cli/cli.hpp"
#include "mapper/cli/process.hpp"

int main(int argc, char** argv) {
  npumap::cli::set_up_process();
  return npumap::cli::run_cli(argc, argv);
}
