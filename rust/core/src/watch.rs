//! Knowing that nothing in a repository changed without walking it: a watch on every folder a
//! walk entered (Linux's inotify), read on demand.
//!
//! A server keeps an index fresh by walking the repository before each question; at 100,000
//! files the walk alone is hundreds of milliseconds, spent mostly to learn that nothing changed.
//! [`TreeWatch::walk`] walks as [`walk::walk`] does and watches the folders it entered;
//! [`TreeWatch::changes`] then reads what the kernel queued since, without blocking, and counts
//! the reads that found something. A caller that remembers the count of its last walk whose
//! files matched its index knows, while the count stays the same, that they still match.
//!
//! The kernel queues an event before the call that changed the file returns, so a change made
//! before [`TreeWatch::changes`] is called is counted by that call. What the count cannot see
//! is counted as a change: a queue that overflowed, a watched folder removed. A folder watched
//! for the first time may have changed before its watch began: the walk that adds it counts a
//! change, so the next check walks once more. Events no walk would act on are left out: those
//! of hidden files other than ignore files (a walk that leaves hidden files out never indexes
//! them; editors' swap files are such), and those of folders no longer watched.
//!
//! The events also say where things changed, so a walk after the first walks only that: the
//! files of the folders where a file changed, and the whole of a folder made, removed or moved,
//! or whose ignore file or cache marker changed. The rest of the report is the previous walk's.
//! [`TreeWatch::walk`] so gives what a whole walk gives (a property test compares them after
//! random sequences of edits), in time proportional to the change. It walks everything when
//! the queue overflowed, when the options differ from the previous walk's, and when a walk met
//! an entry it could not read (it cannot tell which folder to walk again for it). A folder
//! left out as a cache for a marker file it holds is watched for that marker alone, so that its
//! removal is seen.
//!
//! What no event reports is out of its reach: changes made on another machine to a network
//! file system (the tree is then not watched, [`Error::InvalidArgument`]), and ignore rules read
//! from outside the folders the walk enters (`.git/info/exclude`).

use crate::walk::{self, SkipReason, WalkOptions, WalkReport, WalkedFile, Within, IGNORE_FILE};
use crate::{Error, Result};
use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask, Watches};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::OsStr;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// What a folder's watch reports: anything that changes a file's content, stat or name, or the
/// folder itself. A file written through a memory map raises no modify event, but its close does.
fn watch_mask() -> WatchMask {
    WatchMask::MODIFY
        | WatchMask::ATTRIB
        | WatchMask::CLOSE_WRITE
        | WatchMask::MOVED_FROM
        | WatchMask::MOVED_TO
        | WatchMask::CREATE
        | WatchMask::DELETE
        | WatchMask::DELETE_SELF
        | WatchMask::MOVE_SELF
        | WatchMask::ONLYDIR
        | WatchMask::DONT_FOLLOW
        | WatchMask::EXCL_UNLINK
}

/// Bytes read from the kernel at a time: room for hundreds of events.
const EVENT_BUFFER_BYTES: usize = 64 * 1024;

/// Names whose change changes which files of their folder's whole subtree are walked: the
/// ignore files, and the markers that make a folder a cache ([`walk::CACHE_MARKERS`]).
const SUBTREE_FILES: &[&str] = &[".gitignore", ".ignore", IGNORE_FILE, walk::CACHE_MARKERS[0], walk::CACHE_MARKERS[1]];

/// What the latest walk found, kept to be brought up to date.
struct Kept {
    options: WalkOptions,
    /// Sorted by path, as a walk reports them.
    files: Vec<WalkedFile>,
    /// The entries left out, by the folder they lie in.
    skipped: HashMap<PathBuf, BTreeMap<SkipReason, u64>>,
    folders: HashSet<PathBuf>,
    /// The folders left out for a cache marker (watched for their markers alone).
    marked: HashSet<PathBuf>,
}

/// Where the events said something changed since the latest walk began.
#[derive(Default)]
struct Stale {
    /// Folders where a file changed.
    folders: HashSet<PathBuf>,
    /// Folders made, removed or moved, and those whose ignore file or cache marker changed.
    subtrees: HashSet<PathBuf>,
    /// Whether nothing of the latest walk may be kept (the queue overflowed).
    everything: bool,
}

/// File systems whose changes can be made where this machine's kernel never sees them (statfs
/// magic numbers): NFS, SMB/CIFS (three), FUSE, 9P, Ceph, AFS, Coda, Lustre, GPFS.
const REMOTE_FILE_SYSTEMS: &[i64] = &[
    0x6969,
    0x517b,
    0xff53_4d42,
    0xfe53_4d42,
    0x6573_5546,
    0x0102_1997,
    0x00c3_6400,
    0x5346_414f,
    0x7375_7245,
    0x0bd0_0bd0,
    0x4750_4653,
];

/// A watch on the folders of one repository.
pub struct TreeWatch {
    root: PathBuf,
    inotify: Inotify,
    watches: Watches,
    /// Each watched folder, relative to the root, by its watch.
    watched: HashMap<WatchDescriptor, PathBuf>,
    /// The watches of folders left out as caches for a marker they hold: only the markers'
    /// events count there (a build writing to `target/` changes nothing a walk lists).
    marked: HashSet<WatchDescriptor>,
    /// How many reads of the queue found a change, plus walks that began watching a folder.
    changes: u64,
    /// Whether the latest walk entered hidden files: if not, their events are left out.
    include_hidden: bool,
    buffer: Vec<u8>,
    /// The latest walk's findings, when a walk of what changed can bring them up to date.
    kept: Option<Kept>,
    stale: Stale,
    /// How many walks walked only what changed (for tests and benchmarks).
    partial_walks: u64,
}

impl TreeWatch {
    /// A watch of the tree at `root`, watching nothing until the first [`TreeWatch::walk`].
    /// Fails when `root` is not a folder, when it lies on a network file system, and when the
    /// kernel gives no more watch instances.
    pub fn new(root: &Path) -> Result<TreeWatch> {
        let io = |source: std::io::Error| Error::Io { path: root.to_path_buf(), source };
        let meta = std::fs::metadata(root).map_err(io)?;
        if !meta.is_dir() {
            return Err(Error::InvalidArgument(format!("{} is not a directory", root.display())));
        }
        if let Some(kind) = remote_file_system(root) {
            return Err(Error::InvalidArgument(format!(
                "{} is on a network file system (type {kind:#x}), whose changes made elsewhere raise no event",
                root.display()
            )));
        }
        let inotify = Inotify::init().map_err(io)?;
        let watches = inotify.watches();
        Ok(TreeWatch {
            root: root.to_path_buf(),
            inotify,
            watches,
            watched: HashMap::new(),
            marked: HashSet::new(),
            changes: 0,
            include_hidden: false,
            buffer: vec![0; EVENT_BUFFER_BYTES],
            kept: None,
            stale: Stale::default(),
            partial_walks: 0,
        })
    }

    /// How many walks walked only what changed since the one before.
    pub fn partial_walks(&self) -> u64 {
        self.partial_walks
    }

    /// The root watched.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// How many folders are watched.
    pub fn watched(&self) -> usize {
        self.watched.len()
    }

    /// [`walk::walk`] of the root with `options`, then the folders it entered watched (and
    /// those it no longer enters not): what the next [`TreeWatch::changes`] reports on. After
    /// the first, only what the events read since the previous walk say changed is walked
    /// (the module's docs). A folder watched for the first time counts as a change (it may have
    /// changed before its watch began), and is walked again by the next walk. Fails as the walk
    /// does, and when the kernel allows no more watches (the watch then holds none).
    pub fn walk(&mut self, options: &WalkOptions) -> Result<WalkReport> {
        let options = WalkOptions { list_folders: true, ..options.clone() };
        // What is queued now is walked now, whether or not the caller read the count since.
        self.changes()?;
        self.include_hidden = options.include_hidden;
        let stale = std::mem::take(&mut self.stale);
        let keeps = !stale.everything && self.kept.as_ref().is_some_and(|kept| kept.options == options);
        match if keeps { self.walk_within(&options, stale)? } else { None } {
            Some(found) => Ok(found),
            None => self.walk_whole(&options),
        }
    }

    /// The whole tree walked, its folders watched, and what it found kept.
    fn walk_whole(&mut self, options: &WalkOptions) -> Result<WalkReport> {
        self.kept = None;
        let mut report = match walk::walk(&self.root, options) {
            Ok(report) => report,
            Err(err) => {
                self.stale.everything = true;
                return Err(err);
            }
        };
        let folders: HashSet<PathBuf> = std::mem::take(&mut report.folders).into_iter().collect();
        let marked: HashSet<PathBuf> = std::mem::take(&mut report.marked).into_iter().collect();
        let before = std::mem::take(&mut self.watched);
        self.marked.clear();
        let mut began = Vec::new();
        let watching = folders.iter().map(|f| (f, false)).chain(marked.iter().map(|f| (f, true)));
        if let Err(err) = self.watch_folders(watching, &before, &mut began) {
            self.watched.extend(before);
            self.forget_all();
            return Err(err);
        }
        for (wd, _) in before {
            if !self.watched.contains_key(&wd) {
                // Its removal queues an event of a folder no longer watched, which is left out.
                let _ = self.watches.remove(wd);
            }
        }
        // A walk of the folders watched for the first time, next: unless they are most of them.
        let everything = began.len() * 4 > folders.len().max(16);
        self.began_watching(began, everything);
        let skipped_in = std::mem::take(&mut report.skipped_in);
        if skipped_in.iter().all(|(folder, _)| folder.is_some()) {
            let mut skipped: HashMap<PathBuf, BTreeMap<SkipReason, u64>> = HashMap::new();
            for (folder, reason) in skipped_in {
                *skipped.entry(folder.unwrap_or_default()).or_default().entry(reason).or_default() += 1;
            }
            self.kept = Some(Kept { options: options.clone(), files: report.files.clone(), skipped, folders, marked });
        }
        Ok(report)
    }

    /// The kept findings brought up to date by a walk of what `stale` names, its new folders
    /// watched and its vanished ones not; None when that walk met an entry it could not read
    /// (the caller walks the whole tree).
    fn walk_within(&mut self, options: &WalkOptions, stale: Stale) -> Result<Option<WalkReport>> {
        let within = Within::new(stale.folders, stale.subtrees);
        let mut part = match walk::walk_within(&self.root, options, &within) {
            Ok(part) => part,
            Err(err) => {
                self.kept = None;
                self.stale.everything = true;
                return Err(err);
            }
        };
        if part.skipped_in.iter().any(|(folder, _)| folder.is_none()) {
            return Ok(None);
        }
        let Some(kept) = self.kept.as_mut() else { return Ok(None) };
        let listed = |path: &Path| within.lists(path.parent().unwrap_or(Path::new("")));
        kept.files.retain(|file| !listed(&file.path));
        if !part.files.is_empty() {
            kept.files.append(&mut part.files);
            // Two sorted runs: the sort merges them.
            kept.files.sort_by(|a, b| a.path.cmp(&b.path));
        }
        kept.skipped.retain(|folder, _| !within.lists(folder));
        for (folder, reason) in std::mem::take(&mut part.skipped_in) {
            *kept.skipped.entry(folder.unwrap_or_default()).or_default().entry(reason).or_default() += 1;
        }
        // The folders walked again (and the cache folders met again) replace what was kept of them.
        let found: HashSet<PathBuf> = std::mem::take(&mut part.folders).into_iter().collect();
        let found_marked: HashSet<PathBuf> = std::mem::take(&mut part.marked).into_iter().collect();
        let walked_again = |folder: &PathBuf| within.folders.contains(folder) || within.in_subtree(folder);
        let mut gone = HashSet::new();
        for (set, now) in [(&mut kept.folders, &found), (&mut kept.marked, &found_marked)] {
            set.retain(|folder| {
                let keep = !walked_again(folder) || now.contains(folder);
                if !keep {
                    gone.insert(folder.clone());
                }
                keep
            });
        }
        let new_folders: Vec<PathBuf> = found.into_iter().filter(|f| !kept.folders.contains(f)).collect();
        let new_marked: Vec<PathBuf> = found_marked.into_iter().filter(|f| !kept.marked.contains(f)).collect();
        kept.folders.extend(new_folders.iter().cloned());
        kept.marked.extend(new_marked.iter().cloned());
        gone.retain(|folder| !kept.folders.contains(folder) && !kept.marked.contains(folder));
        let report = WalkReport { files: kept.files.clone(), skipped: totals(&kept.skipped), ..WalkReport::default() };
        if !gone.is_empty() {
            let unwatched: Vec<WatchDescriptor> = self.watched.iter().filter(|(_, f)| gone.contains(*f)).map(|(wd, _)| wd.clone()).collect();
            for wd in unwatched {
                self.watched.remove(&wd);
                self.marked.remove(&wd);
                let _ = self.watches.remove(wd);
            }
        }
        if !new_folders.is_empty() || !new_marked.is_empty() {
            let before = self.watched.clone();
            let mut began = Vec::new();
            let watching = new_folders.iter().map(|f| (f, false)).chain(new_marked.iter().map(|f| (f, true)));
            self.watch_folders(watching, &before, &mut began)?;
            self.began_watching(began, false);
        }
        self.partial_walks += 1;
        Ok(Some(report))
    }

    /// Watches each folder (relative to the root; a cache folder for its markers alone). One
    /// not watched in `before`, or gone since the walk, goes in `began`, to be walked again.
    fn watch_folders<'a>(
        &mut self,
        folders: impl Iterator<Item = (&'a PathBuf, bool)>,
        before: &HashMap<WatchDescriptor, PathBuf>,
        began: &mut Vec<PathBuf>,
    ) -> Result<()> {
        for (folder, marked) in folders {
            let path = self.root.join(folder);
            match self.watches.add(&path, watch_mask()) {
                // Watching a folder already watched gives its descriptor again.
                Ok(wd) => {
                    if !before.contains_key(&wd) {
                        began.push(folder.clone());
                    }
                    if marked {
                        self.marked.insert(wd.clone());
                    } else {
                        self.marked.remove(&wd);
                    }
                    self.watched.insert(wd, folder.clone());
                }
                // Gone or replaced since the walk entered it: a change the next walk sees.
                Err(err) if matches!(err.raw_os_error(), Some(libc::ENOENT) | Some(libc::ENOTDIR)) => began.push(folder.clone()),
                Err(source) => {
                    self.forget_all();
                    return Err(Error::Io { path, source });
                }
            }
        }
        Ok(())
    }

    /// Folders watched for the first time count as a change, and are walked again next: all
    /// of the tree when `everything`.
    fn began_watching(&mut self, began: Vec<PathBuf>, everything: bool) {
        if began.is_empty() {
            return;
        }
        self.changes += 1;
        if everything {
            self.stale.everything = true;
        } else {
            self.stale.subtrees.extend(began);
        }
    }

    /// Reads every event queued so far, without blocking, and returns the count of changes:
    /// it grows when the events hold one a walk could act on.
    pub fn changes(&mut self) -> Result<u64> {
        let TreeWatch { inotify, watched, marked, buffer, include_hidden, root, changes, stale, .. } = self;
        loop {
            let events = match inotify.read_events(buffer) {
                Ok(events) => events,
                Err(err) if err.kind() == ErrorKind::WouldBlock => break,
                Err(err) if err.kind() == ErrorKind::Interrupted => continue,
                Err(source) => return Err(Error::Io { path: root.clone(), source }),
            };
            let mut changed = false;
            for event in events {
                if event.mask.contains(EventMask::Q_OVERFLOW) {
                    changed = true;
                    stale.everything = true;
                } else if event.mask.contains(EventMask::IGNORED) {
                    // A watched folder removed (or its file system unmounted).
                    marked.remove(&event.wd);
                    if let Some(folder) = watched.remove(&event.wd) {
                        changed = true;
                        stale.subtrees.insert(folder);
                    }
                } else if let Some(folder) = watched.get(&event.wd) {
                    if marked.contains(&event.wd) {
                        // A cache folder: only its markers, or its own move or removal, change a walk.
                        let marker = event.name.is_some_and(|name| name.to_str().is_some_and(|n| walk::CACHE_MARKERS.contains(&n)));
                        if marker || event.name.is_none() {
                            changed = true;
                            stale.subtrees.insert(folder.clone());
                        }
                        continue;
                    }
                    match event.name {
                        Some(name) if !*include_hidden && hidden_and_unread(name) => {}
                        Some(name) => {
                            changed = true;
                            if event.mask.contains(EventMask::ISDIR) {
                                stale.subtrees.insert(folder.join(name));
                            } else if name.to_str().is_some_and(|name| SUBTREE_FILES.contains(&name)) {
                                stale.subtrees.insert(folder.clone());
                            } else {
                                stale.folders.insert(folder.clone());
                            }
                        }
                        // The folder itself: its mode, or it was moved or removed.
                        None => {
                            changed = true;
                            stale.subtrees.insert(folder.clone());
                        }
                    }
                }
            }
            if changed {
                *changes += 1;
            }
        }
        Ok(*changes)
    }

    fn forget_all(&mut self) {
        for (wd, _) in self.watched.drain() {
            let _ = self.watches.remove(wd);
        }
        self.marked.clear();
        self.changes += 1;
        self.kept = None;
        self.stale.everything = true;
    }
}

/// The counts of entries left out, over all folders.
fn totals(skipped: &HashMap<PathBuf, BTreeMap<SkipReason, u64>>) -> BTreeMap<SkipReason, u64> {
    let mut totals = BTreeMap::new();
    for counts in skipped.values() {
        for (reason, count) in counts {
            *totals.entry(*reason).or_default() += count;
        }
    }
    totals
}

/// A hidden name other than an ignore file's: a walk that leaves hidden files out neither
/// indexes nor reads it.
fn hidden_and_unread(name: &OsStr) -> bool {
    let bytes = name.as_encoded_bytes();
    bytes.first() == Some(&b'.') && !matches!(name.to_str(), Some(".gitignore" | ".ignore")) && name != OsStr::new(IGNORE_FILE)
}

/// The statfs type of `path`'s file system when it is a network one.
fn remote_file_system(path: &Path) -> Option<i64> {
    use std::os::unix::ffi::OsStrExt;
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut stat: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a statfs struct the call fills.
    if unsafe { libc::statfs(c_path.as_ptr(), &mut stat) } != 0 {
        return None;
    }
    #[allow(clippy::unnecessary_cast)] // f_type's width differs between targets
    let kind = stat.f_type as i64;
    REMOTE_FILE_SYSTEMS.contains(&kind).then_some(kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn write(root: &Path, rel: &str, content: &[u8]) {
        let path = root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
    }

    /// A watch of `root` after its first walk, and its count once the folders watched for the
    /// first time were walked again: the state of a check that found nothing changed.
    fn settled(root: &Path) -> (TreeWatch, u64) {
        let mut watch = TreeWatch::new(root).unwrap();
        watch.walk(&WalkOptions::default()).unwrap();
        let count = watch.changes().unwrap();
        watch.walk(&WalkOptions::default()).unwrap();
        assert_eq!(watch.changes().unwrap(), count, "a second walk watches nothing new");
        (watch, count)
    }

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "src/lib.rs", b"pub fn one() {}\n");
        write(dir.path(), "src/deep/two.rs", b"pub fn two() {}\n");
        write(dir.path(), "README.md", b"# readme\n");
        write(dir.path(), ".gitignore", b"/out/\n");
        write(dir.path(), "out/built.rs", b"// ignored\n");
        dir
    }

    #[test]
    fn nothing_done_is_no_change_and_a_first_watch_is_one() {
        let dir = tree();
        let mut watch = TreeWatch::new(dir.path()).unwrap();
        assert_eq!(watch.changes().unwrap(), 0);
        watch.walk(&WalkOptions::default()).unwrap();
        assert_eq!(watch.watched(), 3, "the root, src and src/deep; not the ignored out/");
        assert_eq!(watch.changes().unwrap(), 1);
        let (mut watch, count) = settled(dir.path());
        for _ in 0..3 {
            assert_eq!(watch.changes().unwrap(), count);
        }
        // Reading a file changes nothing.
        fs::read(dir.path().join("src/lib.rs")).unwrap();
        assert_eq!(watch.changes().unwrap(), count);
    }

    #[test]
    fn every_kind_of_edit_is_counted_as_soon_as_it_returns() {
        let dir = tree();
        let root = dir.path();
        let (mut watch, mut count) = settled(root);
        let edits: Vec<Box<dyn Fn()>> = vec![
            Box::new(|| fs::write(root.join("src/lib.rs"), b"pub fn one() { }\n").unwrap()),
            Box::new(|| write(root, "src/deep/three.rs", b"pub fn three() {}\n")),
            Box::new(|| fs::rename(root.join("src/deep/three.rs"), root.join("src/three.rs")).unwrap()),
            Box::new(|| fs::remove_file(root.join("src/three.rs")).unwrap()),
            Box::new(|| {
                let file = fs::OpenOptions::new().write(true).open(root.join("README.md")).unwrap();
                file.set_modified(std::time::SystemTime::UNIX_EPOCH).unwrap();
            }),
            Box::new(|| fs::write(root.join(".gitignore"), b"/out/\n*.tmp\n").unwrap()),
            Box::new(|| fs::create_dir(root.join("src/new")).unwrap()),
            Box::new(|| fs::remove_dir_all(root.join("src/deep")).unwrap()),
        ];
        for (i, edit) in edits.iter().enumerate() {
            edit();
            let now = watch.changes().unwrap();
            assert!(now > count, "edit {i} was not counted");
            watch.walk(&WalkOptions::default()).unwrap();
            count = watch.changes().unwrap();
            // Settled again: a folder watched for the first time is walked once more.
            watch.walk(&WalkOptions::default()).unwrap();
            count = count.max(watch.changes().unwrap());
            assert_eq!(watch.changes().unwrap(), count);
        }
    }

    #[test]
    fn beginning_to_watch_a_new_folder_counts_a_change() {
        let dir = tree();
        let root = dir.path();
        let (mut watch, count) = settled(root);
        fs::create_dir(root.join("fresh")).unwrap();
        let before = watch.changes().unwrap();
        assert!(before > count);
        // A file made in the folder after the walk entered it and before its watch began raises
        // no event: the walk that begins the watch counts a change, so a check that saw
        // `before` walks once more and finds the file.
        watch.walk(&WalkOptions::default()).unwrap();
        let after = watch.changes().unwrap();
        assert!(after > before, "beginning to watch a folder counts a change");
        write(root, "fresh/late.rs", b"fn late() {}\n");
        assert!(watch.changes().unwrap() > after, "a file made once the folder is watched");
    }

    #[test]
    fn hidden_files_other_than_ignore_files_are_left_out() {
        let dir = tree();
        let root = dir.path();
        let (mut watch, count) = settled(root);
        write(root, "src/.lib.rs.swp", b"swap");
        write(root, ".cache-entry", b"x");
        assert_eq!(watch.changes().unwrap(), count);
        write(root, "src/.ignore", b"deep/\n");
        assert!(watch.changes().unwrap() > count);
        let count = watch.changes().unwrap();
        write(root, &format!("src/{IGNORE_FILE}"), b"lib.rs\n");
        assert!(watch.changes().unwrap() > count);
        // A walk that enters hidden files counts theirs.
        watch.walk(&WalkOptions { include_hidden: true, ..Default::default() }).unwrap();
        let count = watch.changes().unwrap();
        write(root, "src/.hidden.rs", b"fn h() {}\n");
        assert!(watch.changes().unwrap() > count);
    }

    #[test]
    fn folders_no_longer_walked_are_no_longer_watched() {
        let dir = tree();
        let root = dir.path();
        let (mut watch, _) = settled(root);
        fs::write(root.join(".gitignore"), b"/out/\n/src/deep/\n").unwrap();
        watch.walk(&WalkOptions::default()).unwrap();
        assert_eq!(watch.watched(), 2);
        let count = watch.changes().unwrap();
        write(root, "src/deep/ignored.rs", b"fn i() {}\n");
        assert_eq!(watch.changes().unwrap(), count, "an ignored folder's files change nothing");
        write(root, "out/built.rs", b"// rebuilt\n");
        assert_eq!(watch.changes().unwrap(), count);
    }

    #[test]
    fn a_walk_after_an_edit_walks_only_the_folders_it_touched() {
        let dir = tree();
        let root = dir.path();
        let (mut watch, _) = settled(root);
        let partial = watch.partial_walks();
        fs::write(root.join("src/deep/two.rs"), b"pub fn two() { 2 }\n").unwrap();
        write(root, "src/deep/four.rs", b"pub fn four() {}\n");
        let report = watch.walk(&WalkOptions::default()).unwrap();
        assert_eq!(watch.partial_walks(), partial + 1);
        assert_eq!(listing(&report), listing(&walk::walk(root, &WalkOptions::default()).unwrap()));
        assert!(report.files.iter().any(|f| f.path == Path::new("src/deep/four.rs")));
        // Nothing changed since: nothing is walked, and the report is the same.
        let again = watch.walk(&WalkOptions::default()).unwrap();
        assert_eq!(watch.partial_walks(), partial + 2);
        assert_eq!(listing(&again), listing(&report));
        // Other options walk the whole tree.
        watch.walk(&WalkOptions { max_file_size: 10, ..Default::default() }).unwrap();
        assert_eq!(watch.partial_walks(), partial + 2);
    }

    /// What a test compares of two walks: the files with their stats, and the counts left out.
    type Listing = (Vec<(PathBuf, u64, u64)>, Vec<(SkipReason, u64)>);

    fn listing(report: &WalkReport) -> Listing {
        (
            report.files.iter().map(|f| (f.path.clone(), f.size, f.mtime_ns)).collect(),
            report.skipped.iter().map(|(r, n)| (*r, *n)).collect(),
        )
    }

    /// Folders an edit may touch, and names it may give; folder names are among the names, so
    /// a file and a folder may take each other's place.
    const FOLDERS: &[&str] = &["", "lib", "lib/core", "lib/core/inner", "tools", "tools/gen", "notes"];
    const NAMES: &[&str] = &["alpha.rs", "beta.py", "gamma.md", "core", "inner", "gen", "id_rsa", ".hidden.rs"];

    #[derive(Clone, Debug)]
    enum Edit {
        Write { folder: usize, name: usize, size: usize },
        Remove { folder: usize, name: usize },
        Rename { folder: usize, name: usize, to_folder: usize, to_name: usize },
        MakeFolder { folder: usize, name: usize },
        RemoveFolder { folder: usize },
        MoveFolder { folder: usize, to_folder: usize, to_name: usize },
        Ignore { folder: usize, name: usize },
        Unignore { folder: usize },
        CacheMarker { folder: usize },
        Uncache { folder: usize },
        Symlink { folder: usize, name: usize },
        Touch { folder: usize, name: usize },
    }

    fn edit_strategy() -> impl proptest::strategy::Strategy<Value = Edit> {
        use proptest::prelude::*;
        let f = 0..FOLDERS.len();
        let n = 0..NAMES.len();
        prop_oneof![
            6 => (f.clone(), n.clone(), 0usize..96).prop_map(|(folder, name, size)| Edit::Write { folder, name, size }),
            2 => (f.clone(), n.clone()).prop_map(|(folder, name)| Edit::Remove { folder, name }),
            2 => (f.clone(), n.clone(), f.clone(), n.clone())
                .prop_map(|(folder, name, to_folder, to_name)| Edit::Rename { folder, name, to_folder, to_name }),
            2 => (f.clone(), n.clone()).prop_map(|(folder, name)| Edit::MakeFolder { folder, name }),
            1 => f.clone().prop_map(|folder| Edit::RemoveFolder { folder }),
            2 => (f.clone(), f.clone(), n.clone()).prop_map(|(folder, to_folder, to_name)| Edit::MoveFolder { folder, to_folder, to_name }),
            1 => (f.clone(), n.clone()).prop_map(|(folder, name)| Edit::Ignore { folder, name }),
            1 => f.clone().prop_map(|folder| Edit::Unignore { folder }),
            1 => f.clone().prop_map(|folder| Edit::CacheMarker { folder }),
            1 => f.clone().prop_map(|folder| Edit::Uncache { folder }),
            1 => (f.clone(), n.clone()).prop_map(|(folder, name)| Edit::Symlink { folder, name }),
            1 => (f, n).prop_map(|(folder, name)| Edit::Touch { folder, name }),
        ]
    }

    /// Applies `edit` where it can be made (a missing source, an occupied target: nothing).
    fn apply(root: &Path, edit: &Edit) {
        let at = |folder: usize, name: usize| root.join(FOLDERS[folder]).join(NAMES[name]);
        match *edit {
            Edit::Write { folder, name, size } => {
                let path = at(folder, name);
                if !path.is_dir() && fs::create_dir_all(path.parent().unwrap()).is_ok() {
                    let _ = fs::write(&path, vec![b'x'; size]);
                }
            }
            Edit::Remove { folder, name } => {
                let _ = fs::remove_file(at(folder, name));
            }
            Edit::Rename { folder, name, to_folder, to_name } => {
                let (from, to) = (at(folder, name), at(to_folder, to_name));
                if from.is_file() && !to.exists() && to.parent().unwrap().is_dir() {
                    fs::rename(from, to).unwrap();
                }
            }
            Edit::MakeFolder { folder, name } => {
                let path = root.join(FOLDERS[folder]);
                if fs::create_dir_all(&path).is_ok() {
                    let _ = fs::write(path.join(NAMES[name]), b"made with its folder\n");
                }
            }
            Edit::RemoveFolder { folder } => {
                if folder > 0 {
                    let _ = fs::remove_dir_all(root.join(FOLDERS[folder]));
                }
            }
            Edit::MoveFolder { folder, to_folder, to_name } => {
                let (from, to) = (root.join(FOLDERS[folder]), at(to_folder, to_name));
                if folder > 0 && from.is_dir() && !to.exists() && to.parent().unwrap().is_dir() && !to.starts_with(&from) {
                    fs::rename(from, to).unwrap();
                }
            }
            Edit::Ignore { folder, name } => {
                let path = root.join(FOLDERS[folder]);
                if path.is_dir() {
                    fs::write(path.join(".gitignore"), format!("{}\n", NAMES[name])).unwrap();
                }
            }
            Edit::Unignore { folder } => {
                let _ = fs::remove_file(root.join(FOLDERS[folder]).join(".gitignore"));
            }
            Edit::CacheMarker { folder } => {
                let path = root.join(FOLDERS[folder]);
                if path.is_dir() {
                    fs::write(path.join("CACHEDIR.TAG"), b"Signature: 8a477f597d28d172789f06886806bc55\n").unwrap();
                }
            }
            Edit::Uncache { folder } => {
                let _ = fs::remove_file(root.join(FOLDERS[folder]).join("CACHEDIR.TAG"));
            }
            Edit::Symlink { folder, name } => {
                let path = at(folder, name);
                if path.parent().unwrap().is_dir() && !path.exists() && path.symlink_metadata().is_err() {
                    std::os::unix::fs::symlink(root.join("lib"), path).unwrap();
                }
            }
            Edit::Touch { folder, name } => {
                if let Ok(file) = fs::OpenOptions::new().write(true).open(at(folder, name)) {
                    let _ = file.set_modified(std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000));
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]

        /// After every edit of a random sequence, a walk of what the events say changed reports
        /// what a whole walk of the tree reports.
        #[test]
        fn walks_of_what_changed_report_what_whole_walks_do(
            edits in proptest::collection::vec(edit_strategy(), 1..24),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path();
            write(root, "lib/core/inner/deep.rs", b"fn deep() {}\n");
            write(root, "tools/gen/make.py", b"def make(): pass\n");
            write(root, "notes/gamma.md", b"# notes\n");
            let options = WalkOptions { max_file_size: 64, ..Default::default() };
            let mut watch = TreeWatch::new(root).unwrap();
            watch.walk(&options).unwrap();
            watch.walk(&options).unwrap();
            for (i, edit) in edits.iter().enumerate() {
                apply(root, edit);
                let report = watch.walk(&options).unwrap();
                let whole = walk::walk(root, &options).unwrap();
                proptest::prop_assert_eq!(listing(&report), listing(&whole), "after edit {} ({:?}) of {:?}", i, edit, edits);
            }
            // Each walk after the first two walked only what changed.
            proptest::prop_assert_eq!(watch.partial_walks(), edits.len() as u64);
        }
    }

    #[test]
    fn the_root_must_be_a_local_folder() {
        let dir = tree();
        assert!(matches!(TreeWatch::new(&dir.path().join("README.md")), Err(Error::InvalidArgument(_))));
        assert!(matches!(TreeWatch::new(&dir.path().join("missing")), Err(Error::Io { .. })));
    }
}
