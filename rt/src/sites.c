// Start and end of the executable's `ilgen_sites` section, or NULL when no instrumented module was
// linked. The linker defines __start_<section> and __stop_<section> for any section whose name is
// a C identifier; the weak references resolve to NULL when the section does not exist.
extern const char __start_ilgen_sites[] __attribute__((weak));
extern const char __stop_ilgen_sites[] __attribute__((weak));

const char *__ilgen_rt_sites_start(void) { return __start_ilgen_sites; }

const char *__ilgen_rt_sites_stop(void) { return __stop_ilgen_sites; }
