//! Finding the files of a repository worth indexing, and reading them.
//!
//! The walk honours `.gitignore` files (nested ones too, and also outside a git checkout, so an
//! exported source tree is treated like its repository), `.ignore`, and the project's own
//! `.maguyvaignore` in the same syntax. VCS folders are never entered; dependency and cache
//! folders are skipped unless asked for. Nothing is silently dropped: every file left out is
//! counted under a reason.

use crate::{Error, Result};
use rayon::prelude::*;
use std::collections::{BTreeMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::UNIX_EPOCH;

/// The project ignore file, read like a `.gitignore` in every folder.
pub const IGNORE_FILE: &str = ".maguyvaignore";

/// Bytes probed for a NUL to tell binary files from text (as git does).
pub const BINARY_PROBE_LEN: usize = 8 * 1024;

/// Folders of version control systems: never code, never entered.
const VCS_DIRS: &[&str] = &[".git", ".hg", ".svn", ".bzr", "_darcs", ".jj", ".pijul", "CVS"];

/// Folders of installed dependencies, caches and tool state. (Build output such as `build/`
/// and `dist/` is kept and demoted at ranking time instead: some projects keep sources there.)
const DEPENDENCY_DIRS: &[&str] = &[
    "node_modules",
    "bower_components",
    "jspm_packages",
    "__pycache__",
    ".venv",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".hypothesis",
    ".gradle",
    ".next",
    ".nuxt",
    ".svelte-kit",
    ".terraform",
    ".dart_tool",
    "Pods",
    ".eggs",
    ".cache",
];

/// Why a file was left out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SkipReason {
    /// Larger than the size limit.
    TooLarge,
    /// A NUL byte in its first [`BINARY_PROBE_LEN`] bytes.
    Binary,
    /// It could not be read (permissions, I/O error), or its metadata could not.
    Unreadable,
    /// It disappeared between the walk and the read.
    Vanished,
    /// A symbolic link, not followed.
    Symlink,
    /// Inside a dependency or cache folder (the whole folder counts once).
    DependencyDir,
    /// Not a regular file (socket, device, fifo).
    NotAFile,
    /// Named like a file of keys or credentials (see [`is_secret_name`]); indexed only when asked.
    Secret,
}

impl SkipReason {
    /// A stable snake_case name for reports.
    pub fn name(self) -> &'static str {
        match self {
            SkipReason::TooLarge => "too_large",
            SkipReason::Binary => "binary",
            SkipReason::Unreadable => "unreadable",
            SkipReason::Vanished => "vanished",
            SkipReason::Symlink => "symlink",
            SkipReason::DependencyDir => "dependency_dir",
            SkipReason::NotAFile => "not_a_file",
            SkipReason::Secret => "secret",
        }
    }
}

/// How to walk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WalkOptions {
    /// Files larger than this many bytes are skipped. Default 1 MB.
    pub max_file_size: u64,
    /// Enter hidden files and folders (VCS folders stay out). Default false.
    pub include_hidden: bool,
    /// Enter dependency and cache folders such as `node_modules`. Default false.
    pub include_dependency_dirs: bool,
    /// Honour `.gitignore`, `.ignore` and git's exclude files. Default true.
    pub respect_gitignore: bool,
    /// Index files named like keys and credentials ([`is_secret_name`]). Default false: an
    /// index is read by agents, and a private key found by a search has leaked.
    pub include_secrets: bool,
    /// List the folders entered ([`WalkReport::folders`]) and the folder of each file left out
    /// ([`WalkReport::skipped_in`]), for a watch of the tree ([`crate::watch`]). Default false.
    pub list_folders: bool,
}

impl Default for WalkOptions {
    fn default() -> Self {
        WalkOptions {
            max_file_size: 1_000_000,
            include_hidden: false,
            include_dependency_dirs: false,
            respect_gitignore: true,
            include_secrets: false,
            list_folders: false,
        }
    }
}

/// File names of private keys and credential stores, compared without case.
const SECRET_NAMES: &[&str] = &[
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "credentials",
    "credentials.json",
    ".npmrc",
    ".pypirc",
    ".netrc",
    "_netrc",
    ".pgpass",
    ".git-credentials",
    ".htpasswd",
];

/// Endings of key and certificate-store files, compared without case.
const SECRET_EXTENSIONS: &[&str] = &["pem", "key", "p12", "pfx", "jks", "keystore", "ppk"];

/// True for a file name that holds keys or credentials by convention: SSH private keys
/// (`id_rsa`, not `id_rsa.pub`), `*.pem`, `*.key`, `*.p12`, `*.pfx`, `*.jks`, `*.keystore`,
/// `*.ppk`, `credentials` files and the credential stores of npm, pip, netrc, PostgreSQL and git;
/// `.env` files are hidden and skipped as such.
pub fn is_secret_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if SECRET_NAMES.contains(&lower.as_str()) {
        return true;
    }
    match lower.rsplit_once('.') {
        Some((stem, ext)) => !stem.is_empty() && SECRET_EXTENSIONS.contains(&ext),
        None => false,
    }
}

/// A file found by the walk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WalkedFile {
    /// Path relative to the walked root.
    pub path: PathBuf,
    /// Size in bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the Unix epoch (0 if unknown).
    pub mtime_ns: u64,
}

/// The files found, sorted by path, and what was left out.
#[derive(Clone, Debug, Default)]
pub struct WalkReport {
    /// Files to index, sorted by path.
    pub files: Vec<WalkedFile>,
    /// How many files (or folders, for [`SkipReason::DependencyDir`]) were left out, by reason.
    pub skipped: BTreeMap<SkipReason, u64>,
    /// The folders entered, relative to the root (the root itself as an empty path), in no
    /// particular order; listed only when [`WalkOptions::list_folders`] asks for them.
    pub folders: Vec<PathBuf>,
    /// Each entry left out with the folder it lies in, when [`WalkOptions::list_folders`] asks
    /// for them; an entry the walk could not read has no folder to name (`None`).
    pub skipped_in: Vec<(Option<PathBuf>, SkipReason)>,
    /// The folders left out for a cache marker they hold ([`CACHE_MARKERS`]), when
    /// [`WalkOptions::list_folders`] asks for them: a watch watches them for the marker alone.
    pub marked: Vec<PathBuf>,
}

/// The part of a tree [`walk_within`] walks: the files of some folders, and whole subtrees.
/// Paths are relative to the root, the root itself an empty path.
#[derive(Clone, Debug, Default)]
pub struct Within {
    /// Folders whose own files are listed (not their subfolders').
    pub folders: HashSet<PathBuf>,
    /// Folders whose every file and folder is listed, as far down as the walk goes.
    pub subtrees: HashSet<PathBuf>,
    /// The folders entered on the way to the others.
    ancestors: HashSet<PathBuf>,
}

impl Within {
    /// The files of `folders` and everything in `subtrees`.
    pub fn new(folders: HashSet<PathBuf>, subtrees: HashSet<PathBuf>) -> Within {
        let mut ancestors = HashSet::new();
        for path in folders.iter().chain(&subtrees) {
            for ancestor in path.ancestors().skip(1) {
                if !ancestors.insert(ancestor.to_path_buf()) {
                    break; // and so are its own ancestors
                }
            }
        }
        Within { folders, subtrees, ancestors }
    }

    /// Whether nothing is to be walked.
    pub fn is_empty(&self) -> bool {
        self.folders.is_empty() && self.subtrees.is_empty()
    }

    /// Whether the files lying directly in `folder` are listed.
    pub fn lists(&self, folder: &Path) -> bool {
        self.folders.contains(folder) || self.in_subtree(folder)
    }

    /// Whether `folder` lies in (or is) one of the subtrees.
    pub fn in_subtree(&self, folder: &Path) -> bool {
        !self.subtrees.is_empty() && folder.ancestors().any(|a| self.subtrees.contains(a))
    }

    fn enters(&self, folder: &Path) -> bool {
        self.ancestors.contains(folder) || self.lists(folder)
    }
}

/// Walks `root` and returns the indexable files, sorted by path.
pub fn walk(root: &Path, options: &WalkOptions) -> Result<WalkReport> {
    let meta = std::fs::metadata(root).map_err(|source| Error::Io { path: root.to_path_buf(), source })?;
    if !meta.is_dir() {
        return Err(Error::InvalidArgument(format!("{} is not a directory", root.display())));
    }
    let report = Mutex::new(WalkReport::default());
    let marked = Arc::new(Mutex::new(Vec::new()));
    let walker = builder(root, options, None, marked.clone()).build_parallel();
    walker.run(|| {
        let report = &report;
        Box::new(move |entry| {
            let outcome = classify(root, entry, options);
            report.lock().unwrap_or_else(|e| e.into_inner()).add(outcome);
            ignore::WalkState::Continue
        })
    });
    let mut report = report.into_inner().unwrap_or_else(|e| e.into_inner());
    report.files.sort_by_cached_key(|file| path_order_key(&file.path));
    report.marked = std::mem::take(&mut marked.lock().unwrap_or_else(|e| e.into_inner()));
    Ok(report)
}

/// [`walk`] of the part of `root` that `within` names, by the same rules: the ignore files of
/// the folders on the way are read as a whole walk reads them, so each file listed is one
/// [`walk`] lists, with the same stat, and each skip one it counts. On one thread: the part is
/// small. The folders entered on the way are listed too (with [`WalkOptions::list_folders`]).
pub fn walk_within(root: &Path, options: &WalkOptions, within: &Within) -> Result<WalkReport> {
    let meta = std::fs::metadata(root).map_err(|source| Error::Io { path: root.to_path_buf(), source })?;
    if !meta.is_dir() {
        return Err(Error::InvalidArgument(format!("{} is not a directory", root.display())));
    }
    let mut report = WalkReport::default();
    if within.is_empty() {
        return Ok(report);
    }
    let marked = Arc::new(Mutex::new(Vec::new()));
    for entry in builder(root, options, Some(Arc::new(within.clone())), marked.clone()).build() {
        report.add(classify(root, entry, options));
    }
    report.files.sort_by_cached_key(|file| path_order_key(&file.path));
    report.marked = std::mem::take(&mut marked.lock().unwrap_or_else(|e| e.into_inner()));
    Ok(report)
}

impl WalkReport {
    fn add(&mut self, found: Found) {
        match found {
            Found::File(file) => self.files.push(file),
            Found::Skipped(reason, place) => {
                *self.skipped.entry(reason).or_default() += 1;
                match place {
                    Place::NotAsked => {}
                    Place::In(folder) => self.skipped_in.push((Some(folder), reason)),
                    Place::Unknown => self.skipped_in.push((None, reason)),
                }
            }
            Found::Folder(path) => self.folders.push(path),
            Found::Nothing => {}
        }
    }
}

/// A key whose byte order is `Path`'s order of relative paths, component by component: the
/// path's bytes with each separator made 0, a byte no name holds, so that "a/b" sorts before
/// "a-b" as its component "a" does. Comparing paths component by component was a sixth of the
/// walk of a large tree.
fn path_order_key(path: &Path) -> Vec<u8> {
    let mut key = Vec::with_capacity(path.as_os_str().len());
    for (i, component) in path.components().enumerate() {
        if i > 0 {
            key.push(0);
        }
        key.extend_from_slice(component.as_os_str().as_encoded_bytes());
    }
    key
}

/// The walker of `root` by `options`; with `within`, only the entries it names (and the folders
/// on the way to them) are entered and classified. Folders left out for a cache marker go in
/// `marked` when the walk lists folders.
fn builder(root: &Path, options: &WalkOptions, within: Option<Arc<Within>>, marked: Arc<Mutex<Vec<PathBuf>>>) -> ignore::WalkBuilder {
    let mut builder = ignore::WalkBuilder::new(root);
    builder
        .hidden(!options.include_hidden)
        .git_ignore(options.respect_gitignore)
        .git_exclude(options.respect_gitignore)
        .git_global(false)
        .ignore(options.respect_gitignore)
        .parents(false)
        // Exported trees (no .git folder) keep their .gitignore semantics.
        .require_git(false)
        .follow_links(false)
        .add_custom_ignore_filename(IGNORE_FILE);
    let include_dependency_dirs = options.include_dependency_dirs;
    let list_folders = options.list_folders;
    let root = root.to_path_buf();
    builder.filter_entry(move |entry| {
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        if entry.depth() == 0 {
            return true;
        }
        if let Some(within) = &within {
            let path = entry.path().strip_prefix(&root).unwrap_or(entry.path());
            let wanted = if is_dir { within.enters(path) } else { within.lists(path.parent().unwrap_or(Path::new(""))) };
            if !wanted {
                return false;
            }
        }
        if !is_dir {
            return true;
        }
        let name = entry.file_name().to_string_lossy();
        if VCS_DIRS.contains(&name.as_ref()) {
            return false;
        }
        if include_dependency_dirs || DEPENDENCY_DIRS.contains(&name.as_ref()) {
            return include_dependency_dirs;
        }
        let cache = CACHE_MARKERS.iter().any(|marker| entry.path().join(marker).is_file());
        if cache && list_folders {
            let path = entry.path().strip_prefix(&root).unwrap_or(entry.path()).to_path_buf();
            marked.lock().unwrap_or_else(|e| e.into_inner()).push(path);
        }
        !cache
    });
    builder
}

/// Files whose presence makes their folder a cache, left out as a dependency folder is (Rust's
/// `target/` holds one; a Python virtual environment, the other).
pub const CACHE_MARKERS: &[&str] = &["CACHEDIR.TAG", "pyvenv.cfg"];

enum Found {
    File(WalkedFile),
    /// Left out, and where.
    Skipped(SkipReason, Place),
    Folder(PathBuf),
    Nothing,
}

/// Where an entry left out lies.
enum Place {
    /// The walk lists no folders.
    NotAsked,
    In(PathBuf),
    /// An entry the walk could not read.
    Unknown,
}

fn classify(root: &Path, entry: std::result::Result<ignore::DirEntry, ignore::Error>, options: &WalkOptions) -> Found {
    let entry = match entry {
        Ok(entry) => entry,
        Err(_) => return Found::Skipped(SkipReason::Unreadable, if options.list_folders { Place::Unknown } else { Place::NotAsked }),
    };
    let Some(file_type) = entry.file_type() else { return Found::Nothing };
    let relative = || entry.path().strip_prefix(root).unwrap_or(entry.path());
    if file_type.is_dir() {
        if !options.list_folders {
            return Found::Nothing;
        }
        return Found::Folder(relative().to_path_buf());
    }
    let skipped = |reason| {
        let place = match options.list_folders {
            true => Place::In(relative().parent().unwrap_or(Path::new("")).to_path_buf()),
            false => Place::NotAsked,
        };
        Found::Skipped(reason, place)
    };
    if file_type.is_symlink() {
        return skipped(SkipReason::Symlink);
    }
    if !file_type.is_file() {
        return skipped(SkipReason::NotAFile);
    }
    let meta = match entry.metadata() {
        Ok(meta) => meta,
        Err(_) => return skipped(SkipReason::Vanished),
    };
    if !options.include_secrets && is_secret_name(&entry.file_name().to_string_lossy()) {
        return skipped(SkipReason::Secret);
    }
    if meta.len() > options.max_file_size {
        return skipped(SkipReason::TooLarge);
    }
    let mtime_ns = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as u64);
    Found::File(WalkedFile { path: relative().to_path_buf(), size: meta.len(), mtime_ns })
}

/// The outcome of reading one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadOutcome {
    /// The file's bytes.
    Text(Vec<u8>),
    /// It was left out, and why.
    Skipped(SkipReason),
}

/// Reads `paths` (relative to `root`) in parallel, classifying binary, unreadable and vanished
/// files, and files that grew past `max_file_size` since the walk.
pub fn read_files(root: &Path, paths: &[PathBuf], max_file_size: u64) -> Vec<ReadOutcome> {
    paths.par_iter().map(|p| read_one(&root.join(p), max_file_size)).collect()
}

fn read_one(path: &Path, max_file_size: u64) -> ReadOutcome {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return ReadOutcome::Skipped(SkipReason::Vanished),
        Err(_) => return ReadOutcome::Skipped(SkipReason::Unreadable),
    };
    let mut bytes = Vec::new();
    // Read one byte past the limit to notice a file that grew beyond it (saturating: a limit of
    // u64::MAX must not wrap to reading nothing).
    if file.take(max_file_size.saturating_add(1)).read_to_end(&mut bytes).is_err() {
        return ReadOutcome::Skipped(SkipReason::Unreadable);
    }
    if bytes.len() as u64 > max_file_size {
        return ReadOutcome::Skipped(SkipReason::TooLarge);
    }
    if is_binary(&bytes) {
        return ReadOutcome::Skipped(SkipReason::Binary);
    }
    ReadOutcome::Text(bytes)
}

/// True when the first [`BINARY_PROBE_LEN`] bytes hold a NUL.
pub fn is_binary(bytes: &[u8]) -> bool {
    memchr::memchr(0, &bytes[..bytes.len().min(BINARY_PROBE_LEN)]).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn the_order_key_sorts_as_paths_do() {
        // Every path of up to three components over names that sort around the separator.
        let names = ["a", "a-b", "a.b", "a\u{1}", "ab", "b", "A", "é"];
        let mut paths: Vec<PathBuf> = Vec::new();
        for x in names {
            paths.push(PathBuf::from(x));
            for y in names {
                paths.push(Path::new(x).join(y));
                for z in ["a", "a-b", "ab"] {
                    paths.push(Path::new(x).join(y).join(z));
                }
            }
        }
        let mut by_path = paths.clone();
        by_path.sort();
        paths.sort_by_cached_key(|p| path_order_key(p));
        assert_eq!(paths, by_path);
    }

    fn write(root: &Path, rel: &str, content: &[u8]) {
        let path = root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
    }

    fn paths(report: &WalkReport) -> Vec<String> {
        report.files.iter().map(|f| f.path.to_string_lossy().replace('\\', "/")).collect()
    }

    #[test]
    fn honours_ignore_files_and_skips_vcs_and_dependency_dirs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, ".gitignore", b"*.log\n/generated/\n");
        write(root, "src/.gitignore", b"local_only.rs\n");
        write(root, ".maguyvaignore", b"docs/draft.md\n");
        write(root, "src/main.rs", b"fn main() {}\n");
        write(root, "src/local_only.rs", b"// ignored by nested gitignore\n");
        write(root, "app.log", b"log line\n");
        write(root, "generated/out.rs", b"// generated\n");
        write(root, "docs/draft.md", b"draft\n");
        write(root, "docs/guide.md", b"guide\n");
        write(root, ".git/config", b"[core]\n");
        write(root, "node_modules/pkg/index.js", b"module.exports = 1;\n");
        write(root, "target/CACHEDIR.TAG", b"Signature: 8a477f597d28d172789f06886806bc55\n");
        write(root, "target/debug/build.rs", b"// build output\n");
        write(root, ".github/workflows/ci.yml", b"on: push\n");

        let report = walk(root, &WalkOptions::default()).unwrap();
        assert_eq!(paths(&report), vec!["docs/guide.md", "src/main.rs"]);
        assert_eq!(report.skipped.get(&SkipReason::DependencyDir), None);

        let everything = WalkOptions { include_hidden: true, include_dependency_dirs: true, ..Default::default() };
        let report = walk(root, &everything).unwrap();
        let found = paths(&report);
        assert!(found.contains(&"node_modules/pkg/index.js".to_string()));
        assert!(found.contains(&".github/workflows/ci.yml".to_string()));
        assert!(found.contains(&"target/debug/build.rs".to_string()));
        assert!(!found.iter().any(|p| p.starts_with(".git/")), "{found:?}");
        assert!(!found.contains(&"app.log".to_string()));
    }

    #[test]
    fn folders_entered_are_listed_when_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, ".gitignore", b"/built/\n");
        write(root, "src/deep/one.rs", b"fn one() {}\n");
        write(root, "built/out.rs", b"// ignored\n");
        write(root, "node_modules/pkg/index.js", b"1\n");
        write(root, ".cache/entry", b"hidden\n");
        fs::create_dir_all(root.join("empty")).unwrap();
        assert!(walk(root, &WalkOptions::default()).unwrap().folders.is_empty());
        let report = walk(root, &WalkOptions { list_folders: true, ..Default::default() }).unwrap();
        let mut folders: Vec<String> = report.folders.iter().map(|f| f.to_string_lossy().replace('\\', "/")).collect();
        folders.sort();
        // An empty folder is entered (a file may appear in it); ignored, dependency and hidden
        // folders are not.
        assert_eq!(folders, vec!["", "empty", "src", "src/deep"]);
    }

    #[test]
    fn too_large_files_are_counted_not_listed() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "small.txt", b"hello");
        write(dir.path(), "big.txt", &vec![b'x'; 2000]);
        let report = walk(dir.path(), &WalkOptions { max_file_size: 1000, ..Default::default() }).unwrap();
        assert_eq!(paths(&report), vec!["small.txt"]);
        assert_eq!(report.skipped[&SkipReason::TooLarge], 1);
        assert_eq!(report.files[0].size, 5);
        assert!(report.files[0].mtime_ns > 0);
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_not_followed_so_loops_cannot_happen() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a/file.txt", b"text");
        std::os::unix::fs::symlink(dir.path(), dir.path().join("a/loop")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("a/file.txt"), dir.path().join("link.txt")).unwrap();
        let report = walk(dir.path(), &WalkOptions::default()).unwrap();
        assert_eq!(paths(&report), vec!["a/file.txt"]);
        assert_eq!(report.skipped[&SkipReason::Symlink], 2);
    }

    #[test]
    fn reading_classifies_binary_vanished_and_text() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "text.rs", b"fn f() {}\n");
        write(dir.path(), "blob.bin", b"\x7fELF\x00\x00");
        write(dir.path(), "latin1.txt", b"caf\xe9\n");
        let outcomes = read_files(
            dir.path(),
            &["text.rs".into(), "blob.bin".into(), "gone.rs".into(), "latin1.txt".into()],
            1000,
        );
        assert_eq!(
            outcomes,
            vec![
                ReadOutcome::Text(b"fn f() {}\n".to_vec()),
                ReadOutcome::Skipped(SkipReason::Binary),
                ReadOutcome::Skipped(SkipReason::Vanished),
                ReadOutcome::Text(b"caf\xe9\n".to_vec()),
            ]
        );
        assert_eq!(read_files(dir.path(), &["text.rs".into()], 3), vec![ReadOutcome::Skipped(SkipReason::TooLarge)]);
    }

    #[test]
    fn keys_and_credentials_are_left_out_unless_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["deploy/id_rsa", "deploy/id_rsa.pub", "tls/server.PEM", "tls/server.key", "aws/credentials",
                     "src/keymap.rs", "src/key.rs", "docs/keys.md", ".npmrc"] {
            write(dir.path(), name, b"text\n");
        }
        let report = walk(dir.path(), &WalkOptions { include_hidden: true, ..Default::default() }).unwrap();
        assert_eq!(paths(&report), vec!["deploy/id_rsa.pub", "docs/keys.md", "src/key.rs", "src/keymap.rs"]);
        assert_eq!(report.skipped[&SkipReason::Secret], 5);
        let asked = WalkOptions { include_hidden: true, include_secrets: true, ..Default::default() };
        assert_eq!(walk(dir.path(), &asked).unwrap().files.len(), 9);
        assert!(!is_secret_name(".key") && is_secret_name("a.key") && !is_secret_name("id_rsa.pub"));
    }

    #[test]
    fn root_must_be_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "f.txt", b"x");
        assert!(matches!(walk(&dir.path().join("missing"), &WalkOptions::default()), Err(Error::Io { .. })));
        assert!(matches!(walk(&dir.path().join("f.txt"), &WalkOptions::default()), Err(Error::InvalidArgument(_))));
    }
}
