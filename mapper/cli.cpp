#include "mapper/cli.hpp"

#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "arch/user_error.hpp"
#include "npumap_version.hpp"

namespace npumap::mapper {

int run_cli(int argc, char** argv) {
  CLI::App app{"npu-mapper: Pareto-optimal mappings of neural networks onto Ethos-U-class NPUs"};
  app.set_version_flag("--version", fmt::format("mapper {} (git {})", kVersion, kGitRevision));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  try {
    return 0;
  } catch (const UserError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
}

}  // namespace npumap::mapper
