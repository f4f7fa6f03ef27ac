// Start of the executable's `ilgen_sites` section, or NULL when no instrumented module was linked.
// The linker defines __start_<section> for any section whose name is a C identifier; the weak
// reference resolves to NULL when the section does not exist.
extern const char __start_ilgen_sites[] __attribute__((weak));

const char *__ilgen_rt_sites_start(void) { return __start_ilgen_sites; }
