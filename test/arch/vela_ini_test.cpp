// The ini reader: Python configparser's rules as Vela reads vela.ini (arch/vela_ini.hpp). Each
// expectation below is what configparser itself gives for the same text (its documented rules:
// full-line comments only, `=` or `:`, keys lower-cased for comparison, deeper-indented lines continue a
// value, blank lines inside a value kept and trailing ones dropped, strict duplicate checks per file).

#include <string>

#include <gtest/gtest.h>

#include "arch/vela_ini.hpp"
#include "common/user_error.hpp"

namespace npumap::arch {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_ini(text, "t.ini");
  } catch (const common::UserError& e) {
    return e.what();
  }
  return "";
}

TEST(VelaIni, SectionsOptionsAndComments) {
  const IniFile f = parse_ini(
      "; a comment\n"
      "# another\n"
      "[System_Config.A]\n"
      "  core_clock=500e6\n"  // an indented first option of a section is an option, not a continuation
      "axi0_port : Sram\n"
      "Sram_clock_scale = 1.0\n"
      "   ; an indented comment is still a comment\n"
      "\n"
      "[Memory_Mode.B]\n"
      "const_mem_area=Axi1\n",
      "t.ini");
  ASSERT_EQ(f.sections.size(), 2u);
  const IniSection& a = f.sections[0];
  EXPECT_EQ(a.name, "System_Config.A");
  EXPECT_EQ(a.line, 3);
  ASSERT_EQ(a.options.size(), 3u);
  EXPECT_EQ(a.options[0].key, "core_clock");
  EXPECT_EQ(a.options[0].value, "500e6");
  EXPECT_EQ(a.options[0].line, 4);
  EXPECT_EQ(a.options[0].key_column, 3);
  EXPECT_EQ(a.options[0].value_column, 14);
  EXPECT_EQ(a.options[1].key, "axi0_port");  // trailing blanks of the key dropped
  EXPECT_EQ(a.options[1].value, "Sram");
  EXPECT_EQ(a.options[2].value, "1.0");
  EXPECT_EQ(f.sections[1].options.at(0).value, "Axi1");
  // Keys compare without regard to case; section names are exact.
  EXPECT_NE(a.find("SRAM_CLOCK_SCALE"), nullptr);
  EXPECT_EQ(f.find("system_config.A"), nullptr);
  EXPECT_NE(f.find("System_Config.A"), nullptr);
}

TEST(VelaIni, NoInlineCommentsAndTheFirstDelimiterSplits) {
  const IniFile f = parse_ini("[S]\nk = 32 ; bytes\nurl = a=b:c\nt: x = y\n", "t.ini");
  const IniSection& s = f.sections.at(0);
  EXPECT_EQ(s.find("k")->value, "32 ; bytes");  // configparser keeps it: no inline comment prefixes by default
  EXPECT_EQ(s.find("url")->value, "a=b:c");      // the key ends at the first `=` or `:`
  EXPECT_EQ(s.find("url")->key, "url");
  EXPECT_EQ(s.find("t")->value, "x = y");
}

TEST(VelaIni, ContinuationLinesAndBlankLinesInValues) {
  const IniFile f = parse_ini(
      "[S]\n"
      "a = first\n"
      "   second\n"
      "\n"
      "   third\n"
      "b = 1\n"
      "\n"
      "\n"
      "c = last\n"
      "\n",
      "t.ini");
  const IniSection& s = f.sections.at(0);
  EXPECT_EQ(s.find("a")->value, "first\nsecond\n\nthird");  // blank lines inside a value are kept
  EXPECT_EQ(s.find("b")->value, "1");                       // trailing blank lines dropped
  EXPECT_EQ(s.find("c")->value, "last");
  // An indented header after an option continues the value: it is not a section.
  const IniFile g = parse_ini("[S]\nk = v\n  [T]\n", "t.ini");
  ASSERT_EQ(g.sections.size(), 1u);
  EXPECT_EQ(g.sections[0].find("k")->value, "v\n[T]");
}

TEST(VelaIni, HeaderNameRunsToTheLastBracket) {
  const IniFile f = parse_ini("[a]b]\nk=1\n[c] trailing\nk=2\n", "t.ini");
  ASSERT_EQ(f.sections.size(), 2u);
  EXPECT_EQ(f.sections[0].name, "a]b");
  EXPECT_EQ(f.sections[1].name, "c");
}

TEST(VelaIni, LineEndsByteOrderMarkAndDefault) {
  const IniFile f = parse_ini("\xEF\xBB\xBF[S]\r\nk=1\r\n[DEFAULT]\rd=2\r[DEFAULT]\ne=3\n", "t.ini");
  ASSERT_EQ(f.sections.size(), 2u);
  EXPECT_EQ(f.sections[0].find("k")->value, "1");
  const IniSection* d = f.find(kIniDefaultSection);
  ASSERT_NE(d, nullptr);  // [DEFAULT] may repeat: its options merge
  EXPECT_EQ(d->options.size(), 2u);
  EXPECT_EQ(d->find("e")->line, 6);
}

TEST(VelaIni, ErrorsAreOneLineAtFileLine) {
  EXPECT_EQ(error_of("k=1\n[S]\n"), "t.ini:1:1: `k=1` comes before any section header (start the file with a section such "
                                    "as [System_Config.My_System] or [Memory_Mode.My_Mode])");
  EXPECT_NE(error_of("[S]\nnovalue\n").find("t.ini:2:1: `novalue` is not an option: expected `key = value`"), std::string::npos);
  EXPECT_NE(error_of("[S]\n= 5\n").find("t.ini:2:1: `= 5` has no key before `=`"), std::string::npos);
  EXPECT_NE(error_of("[S]\nk=1\n[T]\n[S]\n").find("t.ini:4:1: section [S] appears twice in this file (first at line 1)"),
            std::string::npos);
  EXPECT_NE(error_of("[S]\nKey=1\nkey=2\n").find("t.ini:3:1: S.key: set twice in [S] (first at line 2; keys ignore case)"),
            std::string::npos);
  EXPECT_NE(error_of("[DEFAULT]\nk=1\n[S]\n[DEFAULT]\nK=2\n").find("t.ini:5:1: DEFAULT.K: set twice"), std::string::npos);
  EXPECT_NE(error_of("[S]\nk=caf\xe9\n").find("t.ini:2:6: not UTF-8 text"), std::string::npos);
  // `[]` is not a header (configparser needs a name), so it is an option line without a delimiter.
  EXPECT_NE(error_of("[S]\n[]\n").find("is not an option"), std::string::npos);
}

TEST(VelaIni, InterpolationAsConfigparser) {
  const IniFile f = parse_ini("[DEFAULT]\nbase=32\n[S]\nx=%(base)s\ny=%(X)s0\np=100%%\nbad=5%\nloop=%(loop)s\nmissing=%(nope)s\n", "t.ini");
  const IniSection& s = *f.find("S");
  const IniSection* d = f.find(kIniDefaultSection);
  EXPECT_EQ(interpolate(*s.find("x"), s, d, "t.ini"), "32");
  EXPECT_EQ(interpolate(*s.find("y"), s, d, "t.ini"), "320");  // references compare keys lower-cased, and nest
  EXPECT_EQ(interpolate(*s.find("p"), s, d, "t.ini"), "100%");
  EXPECT_THROW(interpolate(*s.find("bad"), s, d, "t.ini"), common::UserError);
  EXPECT_THROW(interpolate(*s.find("loop"), s, d, "t.ini"), common::UserError);
  EXPECT_THROW(interpolate(*s.find("missing"), s, d, "t.ini"), common::UserError);
}

}  // namespace
}  // namespace npumap::arch
