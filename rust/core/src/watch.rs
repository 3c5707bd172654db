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
//! What no event reports is out of its reach: changes made on another machine to a network
//! file system (the tree is then not watched, [`Error::InvalidArgument`]), and ignore rules read
//! from outside the folders the walk enters (`.git/info/exclude`).

use crate::walk::{self, WalkOptions, WalkReport, IGNORE_FILE};
use crate::{Error, Result};
use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask, Watches};
use std::collections::HashMap;
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
    /// How many reads of the queue found a change, plus walks that began watching a folder.
    changes: u64,
    /// Whether the latest walk entered hidden files: if not, their events are left out.
    include_hidden: bool,
    buffer: Vec<u8>,
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
            changes: 0,
            include_hidden: false,
            buffer: vec![0; EVENT_BUFFER_BYTES],
        })
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
    /// those it no longer enters not): what the next [`TreeWatch::changes`] reports on. A folder
    /// watched for the first time counts as a change (it may have changed before its watch
    /// began). Fails as the walk does, and when the kernel allows no more watches (the
    /// watch then holds none).
    pub fn walk(&mut self, options: &WalkOptions) -> Result<WalkReport> {
        let mut report = walk::walk(&self.root, &WalkOptions { list_folders: true, ..options.clone() })?;
        let folders = std::mem::take(&mut report.folders);
        self.include_hidden = options.include_hidden;
        let mut now: HashMap<WatchDescriptor, PathBuf> = HashMap::with_capacity(folders.len());
        let mut began = false;
        for folder in folders {
            let path = self.root.join(&folder);
            match self.watches.add(&path, watch_mask()) {
                // Watching a folder already watched gives its descriptor again.
                Ok(wd) => {
                    began |= !self.watched.contains_key(&wd);
                    now.insert(wd, folder);
                }
                // Gone or replaced since the walk entered it: a change the next walk sees.
                Err(err) if matches!(err.raw_os_error(), Some(libc::ENOENT) | Some(libc::ENOTDIR)) => began = true,
                Err(source) => {
                    self.forget_all();
                    return Err(Error::Io { path, source });
                }
            }
        }
        for (wd, _) in self.watched.drain() {
            if !now.contains_key(&wd) {
                // Its removal queues an event of a folder no longer watched, which is left out.
                let _ = self.watches.remove(wd);
            }
        }
        self.watched = now;
        if began {
            self.changes += 1;
        }
        Ok(report)
    }

    /// Reads every event queued so far, without blocking, and returns the count of changes:
    /// it grows when the events hold one a walk could act on.
    pub fn changes(&mut self) -> Result<u64> {
        let TreeWatch { inotify, watched, buffer, include_hidden, root, changes, .. } = self;
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
                } else if event.mask.contains(EventMask::IGNORED) {
                    // A watched folder removed (or its file system unmounted).
                    changed |= watched.remove(&event.wd).is_some();
                } else if watched.contains_key(&event.wd) {
                    changed |= !event.name.is_some_and(|name| !*include_hidden && hidden_and_unread(name));
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
        self.changes += 1;
    }
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
    fn the_root_must_be_a_local_folder() {
        let dir = tree();
        assert!(matches!(TreeWatch::new(&dir.path().join("README.md")), Err(Error::InvalidArgument(_))));
        assert!(matches!(TreeWatch::new(&dir.path().join("missing")), Err(Error::Io { .. })));
    }
}
