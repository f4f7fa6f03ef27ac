//! `ilgen cc` / `ilgen c++`: a drop-in C/C++ compiler that builds programs ready to record.
//!
//! Takes the user's compiler arguments, untouched; gives clang-19's command line with the ilgen
//! pass plugin added (and line tables, which name the sites) when it compiles sources, and the
//! runtime archive plus the system libraries it needs, and an ELF build id (which names the
//! build in the trace), when it links an executable. Then it becomes
//! clang (exec), so exit status, signals and output are clang's own: `CC="ilgen cc" make` and
//! CMake's compiler checks see a normal compiler.

use std::env;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use ilgen_trace::abi;

use crate::error::CliError;

pub const PLUGIN: &str = "libilgen_pass.so";
pub const RUNTIME: &str = "libilgen_rt.a";
/// The header that marks atomic blocks (`include/ilgen.h` of the source tree).
pub const HEADER: &str = "ilgen.h";
/// Links an ELF build id derived from the executable's contents into it.
const BUILD_ID: &str = "-Wl,--build-id=sha1";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    C,
    Cxx,
}

impl Lang {
    fn driver(self) -> &'static str {
        match self {
            Lang::C => "clang-19",
            Lang::Cxx => "clang++-19",
        }
    }

    fn fallback(self) -> &'static str {
        match self {
            Lang::C => "/usr/lib/llvm-19/bin/clang",
            Lang::Cxx => "/usr/lib/llvm-19/bin/clang++",
        }
    }
}

/// Where the plugin, the runtime and `ilgen.h` are.
#[derive(Clone, Debug)]
pub struct Tools {
    pub plugin: PathBuf,
    pub runtime: PathBuf,
    /// The directory holding [`HEADER`], put on the include path; `None` when not found (a
    /// program that includes it then fails to compile, naming the header).
    pub include: Option<PathBuf>,
}

impl Tools {
    /// Looks next to the `ilgen` executable (the build tree: `target/release/`) and then in
    /// `<bindir>/../lib/ilgen/` (the layout `make install` creates).
    pub fn locate() -> Result<Tools, CliError> {
        let exe = env::current_exe().map_err(|e| {
            CliError::Input(format!(
                "cannot find the ilgen executable's own path ({e}), so not the plugin and runtime \
                 beside it either"
            ))
        })?;
        let dir = exe.parent().unwrap_or(Path::new("/"));
        let mut tools = Self::locate_in(&[dir.to_path_buf(), dir.join("../lib/ilgen")])?;
        // Installed: <prefix>/bin/ilgen and <prefix>/include/ilgen.h; the build tree:
        // target/release/ilgen and include/ilgen.h.
        tools.include = [dir.join("../include"), dir.join("../../include")]
            .into_iter()
            .find(|d| d.join(HEADER).is_file());
        Ok(tools)
    }

    /// The first directory of `dirs` holding both files.
    pub fn locate_in(dirs: &[PathBuf]) -> Result<Tools, CliError> {
        for dir in dirs {
            let plugin = dir.join(PLUGIN);
            let runtime = dir.join(RUNTIME);
            if plugin.is_file() && runtime.is_file() {
                return Ok(Tools {
                    plugin,
                    runtime,
                    include: None,
                });
            }
        }
        let looked: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        Err(CliError::Input(format!(
            "cannot find {PLUGIN} and {RUNTIME} (looked in {}); run `make build` in the ilgen \
             source tree, or `make install`",
            looked.join(" and ")
        )))
    }
}

/// The clang driver to run: `clang-19` (or `clang++-19`) on PATH, else LLVM 19's own directory.
pub fn find_clang(lang: Lang) -> PathBuf {
    let name = lang.driver();
    env::var_os("PATH")
        .iter()
        .flat_map(env::split_paths)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from(lang.fallback()))
}

/// What one compiler invocation does, as far as the added flags care.
#[derive(Debug, Default, PartialEq, Eq)]
struct Mode {
    /// A source file is compiled (or no input is named, as in `--version`: the plugin flags are
    /// harmless there, and clang warns about unused flags only when it sees only objects).
    compiles: bool,
    /// An executable is linked: not `-c`/`-S`/`-E`/`-M`, not `-shared`, not a query.
    links_executable: bool,
    /// A shared object is linked (`-shared`, not stopped before linking).
    links_shared: bool,
    /// The user chose the debug info level (any `-g...`).
    has_debug_flag: bool,
    /// `-static` or `-static-pie`: libc.a's allocator cannot be replaced by symbol, only wrapped.
    static_link: bool,
    /// `-x LANG` was given: it applies to every later input, the runtime archive included.
    language_forced: bool,
}

/// Options whose value is the next argument: that argument is no input file.
const SEPARATE_VALUE: &[&str] = &[
    "-o",
    "-I",
    "-D",
    "-U",
    "-L",
    "-l",
    "-x",
    "-include",
    "-imacros",
    "-isystem",
    "-iquote",
    "-idirafter",
    "-iprefix",
    "-iwithprefix",
    "-iwithprefixbefore",
    "-isysroot",
    "--sysroot",
    "-MF",
    "-MT",
    "-MQ",
    "-Xlinker",
    "-Xclang",
    "-Xassembler",
    "-Xpreprocessor",
    "-mllvm",
    "-target",
    "--target",
    "-arch",
    "-z",
    "-u",
    "-e",
    "-T",
    "-aux-info",
    "-ivfsoverlay",
    "-resource-dir",
    "-gcc-toolchain",
    "--gcc-toolchain",
    "-B",
    "-F",
    "-working-directory",
];

/// Flags after which clang stops before linking.
const NO_LINK: &[&str] = &[
    "-c",
    "-S",
    "-E",
    "-M",
    "-MM",
    "-fsyntax-only",
    "-r",
    "--version",
    "-dumpversion",
    "-dumpmachine",
    "--help",
    "-help",
    "-###",
];

const SOURCE_EXTENSIONS: &[&str] = &[
    "c", "i", "cc", "cp", "cxx", "cpp", "c++", "C", "CC", "CPP", "ii", "m", "mm", "M",
];

/// Arguments with response files (`@file`, as CMake and ninja write for long command lines)
/// replaced by their contents, for [`classify`] only: clang itself still reads the files.
/// Quoting is approximated (quotes dropped, whitespace splits); an unreadable file stays an input.
fn expand_response_files(args: &[OsString], depth: u32) -> Vec<OsString> {
    let mut out = Vec::with_capacity(args.len());
    for arg in args {
        let file = arg.to_str().and_then(|a| a.strip_prefix('@'));
        match file.and_then(|f| std::fs::read_to_string(f).ok()) {
            Some(text) if depth < 8 => {
                let words: Vec<OsString> = text
                    .split_whitespace()
                    .map(|w| OsString::from(w.trim_matches(|c| c == '"' || c == '\'')))
                    .collect();
                out.extend(expand_response_files(&words, depth + 1));
            }
            _ => out.push(arg.clone()),
        }
    }
    out
}

fn classify(args: &[OsString]) -> Mode {
    let args = expand_response_files(args, 0);
    let mut mode = Mode::default();
    let mut no_link = false;
    let mut shared = false;
    let mut inputs = 0usize;
    let mut language_forced = false;
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        // Non-UTF-8 arguments are file names: count them as inputs of unknown kind.
        let Some(a) = arg.to_str() else {
            inputs += 1;
            continue;
        };
        if SEPARATE_VALUE.contains(&a) {
            if a == "-x" {
                language_forced = true;
            }
            iter.next();
            continue;
        }
        if NO_LINK.contains(&a) || a.starts_with("-print-") || a.starts_with("--print-") {
            no_link = true;
        } else if a == "-shared" {
            shared = true;
        } else if a == "-static" || a == "-static-pie" {
            mode.static_link = true;
        } else if a.starts_with("-g") {
            mode.has_debug_flag = true;
        } else if a.starts_with("-x") {
            language_forced = true;
        } else if a == "-" {
            inputs += 1;
            mode.compiles = true;
        } else if !a.starts_with('-') {
            inputs += 1;
            let ext = Path::new(a).extension().and_then(OsStr::to_str);
            if ext.is_some_and(|e| SOURCE_EXTENSIONS.contains(&e)) {
                mode.compiles = true;
            }
        }
    }
    // With `-x LANG`, any input may be a source file whatever its name.
    mode.compiles |= inputs == 0 || (language_forced && inputs > 0);
    mode.language_forced = language_forced;
    mode.links_executable = !no_link && !shared && inputs > 0;
    mode.links_shared = !no_link && shared && inputs > 0;
    mode
}

/// The arguments for clang: ours around the user's, which stay in their order and untouched.
pub fn clang_args(tools: &Tools, user: &[OsString]) -> Vec<OsString> {
    let mode = classify(user);
    let mut out: Vec<OsString> = Vec::with_capacity(user.len() + 8);
    if mode.compiles {
        let mut pass = OsString::from("-fpass-plugin=");
        pass.push(&tools.plugin);
        out.push(pass);
        // Loading the same file as a clang plugin too registers the pass's `-mllvm -ilgen-*`
        // options before clang parses them; `-fpass-plugin` alone loads it too late for that.
        let mut plugin = OsString::from("-fplugin=");
        plugin.push(&tools.plugin);
        out.push(plugin);
        if !mode.has_debug_flag {
            // Sites need file:line:col; line tables give them without full debug info.
            out.push("-gline-tables-only".into());
        }
        if let Some(dir) = &tools.include {
            // Last among the system directories: the user's own `ilgen.h`, if any, wins.
            out.push("-idirafter".into());
            out.push(dir.clone().into_os_string());
        }
    }
    if mode.links_executable || mode.links_shared {
        // The build id is how detect and replay tell the recorded executable or shared object from
        // a rebuilt one (Debian's clang asks for one by default, upstream clang does not). Before
        // the user's arguments, so that their own `-Wl,--build-id=...` wins.
        out.push(BUILD_ID.into());
    }
    out.extend(user.iter().cloned());
    if mode.links_executable {
        // After the user's objects, so that the archive resolves their hooks; the runtime needs
        // threads, dlsym (to reach the real functions it wraps) and libm. After `-x c++` the
        // archive would be read as C++ source: `-x none` gives it back its kind. The pthread
        // calls of uninstrumented code (libstdc++'s std::thread) are routed to the runtime too.
        if mode.language_forced {
            out.extend(["-x", "none"].map(OsString::from));
        }
        out.push(tools.runtime.clone().into_os_string());
        out.extend(["-lpthread", "-ldl", "-lm"].map(OsString::from));
        if mode.static_link {
            out.push(static_heap_wraps().into());
        } else {
            // For the instrumented shared objects the program `dlopen`s.
            out.push(format!("-Wl,--export-dynamic-symbol={}*", abi::RUNTIME_PREFIX).into());
        }
        out.extend(
            ilgen_trace::abi::interpose_link_flags(mode.static_link)
                .into_iter()
                .map(OsString::from),
        );
    }
    out
}

/// `-Wl,--wrap=malloc,...`: in a static link, libc.a defines the malloc family strongly, so the
/// runtime reaches every call of it (libc's own included) as `__wrap_NAME` (see `rt/src/heap.c`).
fn static_heap_wraps() -> String {
    let wraps: Vec<String> = abi::HEAP_CALLS
        .iter()
        .map(|name| format!("--wrap={name}"))
        .collect();
    format!("-Wl,{}", wraps.join(","))
}

/// Replaces this process with clang; returns only if that fails.
pub fn run(lang: Lang, user: &[OsString]) -> CliError {
    let tools = match Tools::locate() {
        Ok(t) => t,
        Err(e) => return e,
    };
    let clang = find_clang(lang);
    let mut cmd = std::process::Command::new(&clang);
    cmd.args(clang_args(&tools, user));
    exec(cmd, &clang)
}

#[cfg(unix)]
fn exec(mut cmd: std::process::Command, clang: &Path) -> CliError {
    use std::os::unix::process::CommandExt;
    let e = cmd.exec();
    CliError::Input(format!(
        "failed to run {}: {e}; install clang-19 (`make deps`)",
        clang.display()
    ))
}

#[cfg(not(unix))]
fn exec(mut cmd: std::process::Command, clang: &Path) -> CliError {
    match cmd.status() {
        Ok(status) => std::process::exit(status.code().unwrap_or(1)),
        Err(e) => CliError::Input(format!(
            "failed to run {}: {e}; install clang-19",
            clang.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> Tools {
        Tools {
            plugin: "/x/libilgen_pass.so".into(),
            runtime: "/x/libilgen_rt.a".into(),
            include: None,
        }
    }

    fn args(s: &str) -> Vec<OsString> {
        s.split_whitespace().map(OsString::from).collect()
    }

    fn render(user: &str) -> String {
        clang_args(&tools(), &args(user))
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The interposition flags a link ends with.
    fn interposed(static_link: bool) -> String {
        ilgen_trace::abi::interpose_link_flags(static_link).join(" ")
    }

    #[test]
    fn compiles_see_the_header_directory_after_the_users_links_do_not() {
        let tools = Tools {
            include: Some("/x/include".into()),
            ..tools()
        };
        let render = |user: &str| {
            let out: Vec<String> = clang_args(&tools, &args(user))
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            out.join(" ")
        };
        assert_eq!(
            render("-g -c a.c"),
            "-fpass-plugin=/x/libilgen_pass.so -fplugin=/x/libilgen_pass.so \
             -idirafter /x/include -g -c a.c"
        );
        assert!(!render("a.o -o a").contains("include"));
    }

    #[test]
    fn compile_and_link_adds_plugin_lines_and_runtime() {
        assert_eq!(
            render("-O0 a.c -o a"),
            format!(
                "-fpass-plugin=/x/libilgen_pass.so -fplugin=/x/libilgen_pass.so \
                 -gline-tables-only -Wl,--build-id=sha1 -O0 a.c -o a /x/libilgen_rt.a -lpthread \
                 -ldl -lm -Wl,--export-dynamic-symbol=__ilgen_* {}",
                interposed(false)
            )
        );
    }

    #[test]
    fn static_links_wrap_the_interposed_calls_dynamic_ones_define_them() {
        let st = render("-static a.o -o a");
        assert!(st.ends_with(&interposed(true)), "{st}");
        assert!(
            st.contains("-Wl,--wrap=pthread_create") && !st.contains("--export-"),
            "{st}"
        );
        let dy = render("a.o -o a");
        assert!(dy.ends_with(&interposed(false)), "{dy}");
        assert!(!dy.contains("--wrap"), "{dy}");
    }

    #[test]
    fn compile_only_does_not_link_and_keeps_user_debug_level() {
        assert_eq!(
            render("-g -c a.c -o a.o"),
            "-fpass-plugin=/x/libilgen_pass.so -fplugin=/x/libilgen_pass.so -g -c a.c -o a.o"
        );
        assert!(!render("-E a.c").contains("rt.a"));
        assert!(!render("-MM a.c").contains("rt.a"));
        assert!(render("-MD -c a.c").contains("-fpass-plugin"));
    }

    #[test]
    fn link_only_adds_runtime_but_no_compile_flags() {
        assert_eq!(
            render("a.o b.o -o prog"),
            format!(
                "-Wl,--build-id=sha1 a.o b.o -o prog /x/libilgen_rt.a -lpthread -ldl -lm \
                 -Wl,--export-dynamic-symbol=__ilgen_* {}",
                interposed(false)
            )
        );
    }

    #[test]
    fn static_links_wrap_the_malloc_family_and_dynamic_ones_do_not() {
        let out = render("-static a.c -o a");
        assert!(
            out.ends_with(&format!(
                "/x/libilgen_rt.a -lpthread -ldl -lm -Wl,--wrap=malloc,--wrap=calloc,\
                 --wrap=realloc,--wrap=reallocarray,--wrap=memalign,--wrap=aligned_alloc,\
                 --wrap=posix_memalign,--wrap=valloc,--wrap=pvalloc,--wrap=free {}",
                interposed(true)
            )),
            "{out}"
        );
        assert!(render("-static-pie a.o -o a").contains("--wrap=free"));
        assert!(!render("a.c -o a").contains("--wrap"));
        assert!(!render("-static -c a.c").contains("--wrap"));
    }

    #[test]
    fn queries_and_shared_libraries_get_no_runtime() {
        assert!(!render("--version").contains("rt.a"));
        assert!(!render("-print-file-name=libc.so").contains("rt.a"));
        let shared = render("-shared -fPIC a.c -o liba.so");
        assert!(
            !shared.contains("rt.a") && shared.contains("--build-id"),
            "{shared}"
        );
    }

    #[test]
    fn option_values_are_not_inputs() {
        // `-o a.c` names the output: no input, so nothing to link.
        assert!(!render("-o a.c").contains("rt.a"));
        assert!(render("-x c - -o a").contains("-fpass-plugin"));
        assert!(render("-x c prog.txt -o a").contains("-fpass-plugin"));
        assert!(render("-x c++ a.c -o a").contains("a.c -o a -x none /x/libilgen_rt.a"));
    }

    #[test]
    fn response_files_are_looked_into() {
        let dir = std::env::temp_dir().join(format!("ilgen-cc-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let rsp = dir.join("compile.rsp");
        std::fs::write(&rsp, "-c \"a.c\"\n-o a.o\n").unwrap();
        let user = format!("@{}", rsp.display());
        let out = render(&user);
        assert!(
            out.contains("-fpass-plugin") && !out.contains("rt.a"),
            "{out}"
        );
        assert!(
            out.ends_with(&user),
            "the @file itself reaches clang: {out}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn missing_tools_name_the_directories() {
        let err = Tools::locate_in(&["/nonexistent/a".into(), "/nonexistent/b".into()])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("/nonexistent/a") && err.contains("/nonexistent/b"),
            "{err}"
        );
        assert!(err.contains("make build"), "{err}");
    }
}
