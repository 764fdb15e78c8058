// Sample for scripts/function-length.awk (test/function_length/run.sh). Not compiled. Every function
// below is listed with its first line, last line and length in expected.txt, counted by hand; the
// constructs around them (strings, comments, macros, initialisers) must not be taken for functions.
#include <string>
#define BRACES(x) \
  { x; }       \
  }

namespace outer::inner {

/* a comment with braces { } spanning
   two lines { */
int plain(int a,
          int b) {
  return a + b;  // } in a comment
}

template <typename T, typename U = std::vector<int>>
T templated(T x) {
  return x;
}

const int table[][2] = {{1, 2},
                        {3, 4}};

enum class Kind { A, B };

struct Holder {
  int a{3};
  int b = 4, c{5};
  int get() const noexcept { return a; }
  bool operator==(const Holder&) const = default;
  Holder() : a{1}, b(2) {
    c = 6;
  }
  int operator()(int x) const {
    return x + a;
  }
  struct Nested {
    void f() &&
    {
    }
  };
};

const auto square = [](int x) {
  return x * x;
};

std::string strings() {
  const std::string s = "{ \" }";
  const char c = '{';
  const char d = '\'';
  const std::string raw = R"x({ )"
} )x";
  const int big = 1'000'000;
  return s + c + d + raw + std::to_string(big);
}

auto trailing(int x) -> int {
  struct Local {
    int v;
  };
  auto inner = [&](int y) { return Local{y}.v; };
  return inner(x);
}

void defaults(int a, const std::string& s = {},
              const std::string& t = {}) {
  (void)a;
}

int Holder2::member() const {
  return 1;
}

}  // namespace outer::inner

extern "C" {
int c_function(void) { return 0; }
}

namespace {
struct alignas(64) Aligned {
  int v;
};
}  // namespace
