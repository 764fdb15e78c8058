// The documentation is tested: every command of README.md and docs/*.md runs, and where a page shows
// a command's output, the real output must match it. So neither can go stale.
//
// What a page's fenced blocks mean to this test:
//   ```sh        every line is a command (a trailing `\` continues it; `#` lines are comments). Each
//                must exit 0. Its output is not compared.
//   ```console   `$ command` lines, each followed by the output it prints (stdout and stderr
//                together) up to the next `$ ` line. The output must match (below); the exit status
//                is not checked (pages show it with `; echo "exit $?"` where it matters).
//   other blocks (yaml, json, text, none) are not run.
// A block the test cannot run (it builds the project, or needs a cluster) is preceded by the line
//   <!-- doc-test: not run: <reason> -->
// and the reason must be given; no other block may be left out.
//
// Matching an output, line by line after normalising both sides:
//   * trailing spaces are ignored;
//   * a line `...` stands for any number of lines (the page trims the output there), and `...`
//     inside a line for any text;
//   * wall-clock times are not compared: a number followed by " s" (seconds), "s elapsed" or
//     "points/min" reads as <time> on both sides (modelled latencies are in ms and are compared);
//   * run folders runs/<timestamp> and 12-digit git revisions read as placeholders.
//
// Each page runs in a scratch copy of the repository (workloads/models linked, not copied), in
// order, so later commands see the files earlier ones wrote (`--out runs/r1`, then `mapper show
// runs/r1`). `mapper` is the executable this build produced, first on PATH.

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace npumap::docs_test {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = NPUMAP_SOURCE_DIR;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string rtrim(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.pop_back();
  return s;
}

// ------------------------------------------------------------------ pages and their blocks

struct Command {
  std::string text;
  std::vector<std::string> expected;  ///< console blocks: the output shown
  bool compare = false;               ///< console: compare the output
  int line = 0;                       ///< where it is on the page
};

struct Block {
  std::string lang;
  int line = 0;  ///< the fence's line
  std::vector<std::string> body;
  std::string not_run;  ///< the reason given by a doc-test marker, or empty
};

struct Page {
  fs::path file;
  std::vector<Block> blocks;
};

Page parse_page(const fs::path& file) {
  Page page{file, {}};
  const std::vector<std::string> lines = split_lines(read_file(file));
  std::string marker;
  static const std::regex kMarker(R"(^<!--\s*doc-test:\s*not run:\s*(.*?)\s*-->\s*$)");
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (std::regex_match(lines[i], m, kMarker)) {
      marker = m[1].str();
      if (marker.empty()) marker = " ";  // a marker without a reason: reported below
      continue;
    }
    if (lines[i].rfind("```", 0) != 0) {
      if (!rtrim(lines[i]).empty()) marker.clear();  // a marker applies to the very next block
      continue;
    }
    Block b;
    b.lang = rtrim(lines[i].substr(3));
    b.line = static_cast<int>(i) + 1;
    b.not_run = marker;
    marker.clear();
    for (++i; i < lines.size() && lines[i].rfind("```", 0) != 0; ++i) b.body.push_back(lines[i]);
    page.blocks.push_back(std::move(b));
  }
  return page;
}

std::vector<Command> commands_of(const Block& b) {
  std::vector<Command> out;
  if (b.lang == "sh") {
    std::string pending;
    int start = 0;
    for (std::size_t i = 0; i < b.body.size(); ++i) {
      std::string line = rtrim(b.body[i]);
      if (pending.empty()) {
        const auto first = line.find_first_not_of(' ');
        if (first == std::string::npos || line[first] == '#') continue;
        start = b.line + 1 + static_cast<int>(i);
      }
      if (!line.empty() && line.back() == '\\') {
        pending += line.substr(0, line.size() - 1) + " ";
        continue;
      }
      out.push_back(Command{pending + line, {}, false, start});
      pending.clear();
    }
  } else if (b.lang == "console") {
    for (std::size_t i = 0; i < b.body.size(); ++i) {
      const std::string& line = b.body[i];
      if (line.rfind("$ ", 0) == 0) {
        out.push_back(Command{line.substr(2), {}, true, b.line + 1 + static_cast<int>(i)});
      } else if (!out.empty()) {
        out.back().expected.push_back(rtrim(line));
      } else {
        ADD_FAILURE() << b.line + 1 + static_cast<int>(i) << ": a console block must start with a `$ ` command line";
      }
    }
    // Blank lines at the end of an output are not output.
    for (Command& c : out) {
      while (!c.expected.empty() && c.expected.back().empty()) c.expected.pop_back();
    }
  }
  return out;
}

// ------------------------------------------------------------------ comparing outputs

std::string normalise(std::string s) {
  static const std::vector<std::pair<std::regex, std::string>> rules = {
      {std::regex(R"(runs/\d{8}-\d{6}(-\d+)?)"), "runs/<timestamp>"},
      {std::regex(R"(\b[0-9a-f]{12}(-dirty)?\b)"), "<revision>"},
      {std::regex(R"(\b\d+(\.\d+)?(e[-+]?\d+)? ?(s elapsed|s left|points/min)\b)"), "<time>$3"},
      {std::regex(R"(\b\d+(\.\d+)?(e[-+]?\d+)? s\b)"), "<time> s"},
  };
  for (const auto& [re, with] : rules) s = std::regex_replace(s, re, with);
  return rtrim(s);
}

/// Whether actual line `a` matches expected line `e` (both normalised); `...` in `e` is any text.
bool line_matches(const std::string& e, const std::string& a) {
  if (e.find("...") == std::string::npos) return e == a;
  std::string pattern;
  std::size_t from = 0;
  for (std::size_t at; (at = e.find("...", from)) != std::string::npos; from = at + 3) {
    for (char c : e.substr(from, at - from)) {
      if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos) pattern += '\\';
      pattern += c;
    }
    pattern += ".*";
  }
  for (char c : e.substr(from)) {
    if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos) pattern += '\\';
    pattern += c;
  }
  return std::regex_match(a, std::regex(pattern));
}

/// Expected lines against actual lines; a `...` line matches any run of lines. Returns "" on a
/// match, else what went wrong.
std::string compare_output(const std::vector<std::string>& expected_raw, const std::string& actual_text) {
  std::vector<std::string> expected, actual;
  for (const std::string& l : expected_raw) expected.push_back(normalise(l));
  for (const std::string& l : split_lines(actual_text)) actual.push_back(normalise(l));
  while (!actual.empty() && actual.back().empty()) actual.pop_back();
  const std::size_t n = expected.size(), m = actual.size();
  // ok[i][j]: expected[i..] matches actual[j..].
  std::vector<std::vector<char>> ok(n + 1, std::vector<char>(m + 1, 0));
  ok[n][m] = 1;
  std::size_t deepest = 0;  // how far the longest matching prefix of expected got, for the message
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t j = m + 1; j-- > 0;) {
      if (expected[i] == "...") {
        ok[i][j] = ok[i + 1][j] || (j < m && ok[i][j + 1]);
      } else {
        ok[i][j] = j < m && line_matches(expected[i], actual[j]) && ok[i + 1][j + 1];
      }
    }
  }
  if (ok[0][0]) return {};
  // Report the first expected line from which no match exists, walking greedily.
  std::size_t i = 0, j = 0;
  while (i < n) {
    if (expected[i] == "...") {
      ++i;
      continue;
    }
    std::size_t k = j;
    while (k < m && !line_matches(expected[i], actual[k])) ++k;
    if (k == m) break;
    j = k + 1;
    ++i;
  }
  deepest = i;
  std::string why = "the output differs from the page";
  if (deepest < n) why += " from the page's line `" + expected_raw[deepest] + "`";
  why += "\n--- real output:\n" + actual_text;
  return why;
}

// ------------------------------------------------------------------ running commands

struct Output {
  int status = -1;
  std::string text;
};

/// Runs `command` with bash in `dir`, `bin` first on PATH; stdout and stderr together. Open MPI
/// may start more ranks than the machine has cores and run as root (a CI container), as a user's
/// own machine would let it.
Output run_shell(const std::string& command, const fs::path& dir, const fs::path& bin) {
  const fs::path script = dir / ".doc-test-command.sh";
  const fs::path out_file = dir / ".doc-test-output";
  {
    std::ofstream s(script);
    s << "cd '" << dir.string() << "' || exit 99\n"
      << "export PATH='" << bin.string() << "':\"$PATH\"\n"
      << "export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1\n"
      << "export OMPI_MCA_btl_vader_single_copy_mechanism=none\n"
      << command << "\n";
  }
  const int raw = std::system(("timeout 600 bash -o pipefail '" + script.string() + "' > '" + out_file.string() + "' 2>&1 < /dev/null").c_str());
  Output o;
  o.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 1000;
  o.text = read_file(out_file);
  fs::remove(out_file);
  fs::remove(script);
  return o;
}

/// A new empty folder under the temp dir.
fs::path scratch_dir(const std::string& tag) {
  std::string pattern = (fs::temp_directory_path() / ("npumap-doc-" + tag + "-XXXXXX")).string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  return pattern;
}

/// A scratch copy of the repository for one page: sources and data copied, the models linked.
fs::path scratch_copy(const std::string& tag) {
  const fs::path dir = scratch_dir(tag);
  for (const auto& e : fs::directory_iterator(kRoot)) {
    const std::string name = e.path().filename().string();
    if (name == "build" || name == "runs" || name == ".git" || name == "out") continue;
    if (name == "workloads") {
      fs::create_directory(dir / name);
      for (const auto& w : fs::directory_iterator(e.path())) {
        if (w.path().filename() == "models") {
          fs::create_directory_symlink(w.path(), dir / name / "models");
        } else {
          fs::copy(w.path(), dir / name / w.path().filename(), fs::copy_options::recursive);
        }
      }
      continue;
    }
    fs::copy(e.path(), dir / name, fs::copy_options::recursive);
  }
  return dir;
}

/// The page's commands see this build as build/release (`cmake --install build/release`).
void link_build(const fs::path& scratch) {
  fs::create_directory(scratch / "build");
  fs::create_directory_symlink(fs::path(NPUMAP_MAPPER_EXE).parent_path().parent_path(), scratch / "build" / "release");
}

/// A folder holding `mapper` (a link to this build's executable), to put first on PATH.
fs::path bin_folder(const fs::path& scratch) {
  const fs::path bin = scratch / ".doc-test-bin";
  fs::create_directory(bin);
  fs::create_symlink(NPUMAP_MAPPER_EXE, bin / "mapper");
  return bin;
}

// ------------------------------------------------------------------ the pages

std::vector<std::string> page_names() {
  std::vector<std::string> names = {"README.md"};
  std::vector<std::string> docs;
  for (const auto& e : fs::directory_iterator(kRoot / "docs")) {
    if (e.path().extension() == ".md") docs.push_back("docs/" + e.path().filename().string());
  }
  std::sort(docs.begin(), docs.end());
  names.insert(names.end(), docs.begin(), docs.end());
  return names;
}

std::string test_name(const std::string& page) {
  std::string n;
  for (char c : page) n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return n;
}

class DocPage : public ::testing::TestWithParam<std::string> {};

TEST_P(DocPage, EveryCommandRunsAndEveryShownOutputMatches) {
  const std::string name = GetParam();
  const Page page = parse_page(kRoot / name);
  const fs::path scratch = scratch_copy(test_name(name));
  link_build(scratch);
  const fs::path bin = bin_folder(scratch);
  int ran = 0;
  for (const Block& b : page.blocks) {
    if (b.lang != "sh" && b.lang != "console") continue;
    if (!b.not_run.empty()) {
      EXPECT_NE(b.not_run, " ") << name << ":" << b.line << ": a `doc-test: not run:` marker needs a reason";
      continue;
    }
    for (const Command& c : commands_of(b)) {
      SCOPED_TRACE(name + ":" + std::to_string(c.line) + ": " + c.text);
      const Output o = run_shell(c.text, scratch, bin);
      ++ran;
      if (c.compare) {
        const std::string why = compare_output(c.expected, o.text);
        EXPECT_TRUE(why.empty()) << name << ":" << c.line << ": `" << c.text << "`: " << why;
      } else {
        EXPECT_EQ(o.status, 0) << name << ":" << c.line << ": `" << c.text << "` exited " << o.status << ":\n" << o.text;
      }
    }
  }
  std::cout << "[ docs     ] " << name << ": " << ran << " commands\n";
  std::error_code ec;
  fs::remove_all(scratch, ec);
}

INSTANTIATE_TEST_SUITE_P(Docs, DocPage, ::testing::ValuesIn(page_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return test_name(info.param); });

// ------------------------------------------------------------------ what the pages cite exists

/// Every relative link and every backquoted repository path of README.md and docs/**/*.md names a
/// file or folder of the repository; nothing cites the project's former `../shared` folder.
TEST(DocLinks, EveryCitedFileIsInTheRepository) {
  std::vector<fs::path> pages = {kRoot / "README.md", kRoot / "workloads" / "models" / "README.md", kRoot / "test" / "data" / "README.md"};
  for (const auto& e : fs::recursive_directory_iterator(kRoot / "docs")) {
    if (e.path().extension() == ".md") pages.push_back(e.path());
  }
  static const std::regex kLink(R"(\]\(([^)#\s]+)(#[^)]*)?\))");
  static const std::regex kCode(R"(`((?:workloads|test|docs|sweeps|arch|bench|scripts|mapper|common|model|cmake|fuzz)/[^`\s]*)`)");
  int checked = 0;
  for (const fs::path& page : pages) {
    const std::string text = read_file(page);
    const std::string rel = fs::relative(page, kRoot).string();
    EXPECT_EQ(text.find("../shared"), std::string::npos) << rel << " cites ../shared, which is not in the repository";
    EXPECT_EQ(text.find("shared documents"), std::string::npos) << rel << " cites the project's shared documents";
    for (std::sregex_iterator it(text.begin(), text.end(), kLink), end; it != end; ++it) {
      const std::string target = (*it)[1].str();
      if (target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0) continue;
      ++checked;
      EXPECT_TRUE(fs::exists(page.parent_path() / target)) << rel << " links to " << target << ", which does not exist";
    }
    for (std::sregex_iterator it(text.begin(), text.end(), kCode), end; it != end; ++it) {
      std::string target = (*it)[1].str();
      // Patterns and placeholders (runs/<timestamp>, shard-*-of-3, {a,b}) name no single file.
      if (target.find_first_of("<>*{}$") != std::string::npos) continue;
      while (!target.empty() && (target.back() == '.' || target.back() == ',' || target.back() == ':')) target.pop_back();
      // A placeholder (arch/presets/NAME.yaml) names no file.
      const std::string stem = fs::path(target).stem().string();
      if (!stem.empty() && std::all_of(stem.begin(), stem.end(), [](char c) { return std::isupper(static_cast<unsigned char>(c)) != 0; })) continue;
      ++checked;
      // A source module (`common/files`: .hpp and .cpp) or a program the build makes (`bench/sweep_bench`).
      const bool module = fs::exists(kRoot / (target + ".hpp")) || fs::exists(kRoot / (target + ".cpp"));
      const bool built = fs::exists(fs::path(NPUMAP_MAPPER_EXE).parent_path().parent_path() / target);
      EXPECT_TRUE(fs::exists(kRoot / target) || module || built) << rel << " cites `" << target << "`, which is not in the repository";
    }
  }
  EXPECT_GT(checked, 100);
}

// ------------------------------------------------------------------ the man page

/// Every long option that `mapper --help` and each subcommand's --help print is in docs/mapper.1.
TEST(ManPage, DescribesEveryOption) {
  const std::string man = read_file(kRoot / "docs" / "mapper.1");
  ASSERT_FALSE(man.empty());
  static const std::regex kOption(R"((^|[\s,])(--[a-z][a-z0-9-]*))");
  int options = 0;
  for (const std::string sub : {"", "eval", "list", "show", "import", "sweep"}) {
    const fs::path tmp = scratch_dir("man");
    const Output o = run_shell("mapper " + sub + " --help", tmp, fs::path(NPUMAP_MAPPER_EXE).parent_path());
    fs::remove_all(tmp);
    ASSERT_EQ(o.status, 0) << o.text;
    for (std::sregex_iterator it(o.text.begin(), o.text.end(), kOption), end; it != end; ++it) {
      const std::string option = (*it)[2].str();
      std::string escaped;
      for (char c : option) escaped += c == '-' ? std::string("\\-") : std::string(1, c);
      ++options;
      EXPECT_NE(man.find(escaped), std::string::npos) << "mapper " << sub << " --help lists " << option
                                                      << ", which docs/mapper.1 does not describe";
    }
  }
  EXPECT_GT(options, 30);
}

// ------------------------------------------------------------------ the matcher itself

TEST(DocOutput, TheComparisonCanFail) {
  EXPECT_EQ(compare_output({"a", "...", "d"}, "a\nb\nc\nd\n"), "");
  EXPECT_EQ(compare_output({"a", "...", "d"}, "a\nd\n"), "");
  EXPECT_NE(compare_output({"a", "...", "d"}, "a\nb\nc\n"), "");
  EXPECT_NE(compare_output({"a", "b"}, "a\nb\nc\n"), "") << "unshown lines need a `...`";
  EXPECT_EQ(compare_output({"x ... y"}, "x 1 2 3 y\n"), "");
  EXPECT_NE(compare_output({"x ... y"}, "x 1 2 3 z\n"), "");
  EXPECT_EQ(compare_output({"took 0.25 s, 3.1 ms"}, "took 1.5 s, 3.1 ms\n"), "") << "seconds are wall time";
  EXPECT_NE(compare_output({"took 0.25 s, 3.1 ms"}, "took 0.25 s, 3.2 ms\n"), "") << "ms are modelled";
  EXPECT_EQ(compare_output({"wrote runs/20261130-072812/result.json"}, "wrote runs/20270101-000000-2/result.json\n"), "");
  EXPECT_EQ(compare_output({"a  "}, "a\n\n"), "");
}

}  // namespace
}  // namespace npumap::docs_test
