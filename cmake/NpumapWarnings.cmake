# Warning flags for every npu-mapper target: -Wall -Wextra -Wpedantic, errors with NPUMAP_WERROR.
add_library(npumap_warnings INTERFACE)
target_compile_options(npumap_warnings INTERFACE -Wall -Wextra -Wpedantic $<$<BOOL:${NPUMAP_WERROR}>:-Werror>)
