//! Crash quarantine: a file the process dies reading is set aside, not read
//! again on every start.
//!
//! Each process appends to its own reading log (`<data>/reading/<pid>.log`)
//! before a file is read and as its work moves on: reading, waiting for
//! the embedder, being embedded, stored. A line is one `write(2)`, so it
//! survives the process being killed (a power cut is not a crash caused by
//! a file, and is not guarded against). The log is emptied whenever nothing
//! is marked, so it stays small.
//!
//! A log whose process is gone is an orphan. The next pass claims it (by
//! renaming it, so two processes never both do) and reads what it says.
//! Whether the process crashed (a fault inside it: the log ends with the
//! line [`crate::crash_signal`] writes) or was killed from outside
//! (`kill -9`, the OOM killer: no such line) decides how sure the blame is:
//! - a file that was being read or embedded beside others is a *suspect*:
//!   the new pass reads each suspect alone, first, so an innocent file read
//!   beside the culprit is not blamed;
//! - a file that was being read alone when the process crashed, or the
//!   only file in progress then, is the *culprit*: it is set aside as a
//!   per-file error until it changes or the person retries it;
//! - a file read alone when the process was killed from outside takes a
//!   *strike* and is read alone again, since a person may have killed
//!   Folio. Two strikes make it the culprit if its last read had lasted
//!   [`LASTING`] (the OOM killer does not give up, and filling memory
//!   takes time). A read a kill caught sooner than that is more likely a
//!   person quitting, and kills just after a start all land on the same
//!   file, since suspects are read first: it takes five (so a file that
//!   gets Folio killed at once still stops doing so; with memory bounded
//!   by the expansion budget, that is a last resort).
//!
//! Files that had been read and were waiting for their commit are none of
//! these: the fault was elsewhere, and the pass simply reads them again.

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

/// How long a lone read runs before the log notes that it lasted: longer
/// than reading a note takes on a loaded machine, shorter than filling
/// memory does.
pub const LASTING: Duration = Duration::from_secs(1);

/// Strikes that make the culprit of a file whose last read lasted
/// [`LASTING`], and of one whose last read was caught sooner.
const STRIKES_LASTING: u32 = 2;
const STRIKES_QUICK: u32 = 5;

/// A step in a file's work, as one line of the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// Its loader runs, beside other files' loaders.
    Reading,
    /// Read; waiting to be embedded or committed.
    Waiting,
    /// Its chunks are in the batch the embedding model is working on.
    Embedding,
    /// Read and embedded with nothing else in progress.
    Alone,
    /// Committed, or given up without a crash: nothing to blame.
    Done,
    /// A strike: was being read alone when a process was killed from
    /// outside. Written once per strike as the file is inherited.
    KilledAlone,
    /// Its lone read has run for [`LASTING`].
    Lasted,
}

impl Mark {
    fn tag(self) -> u8 {
        match self {
            Mark::Reading => b'R',
            Mark::Waiting => b'W',
            Mark::Embedding => b'E',
            Mark::Alone => b'S',
            Mark::Done => b'D',
            Mark::KilledAlone => b'K',
            Mark::Lasted => b'L',
        }
    }

    fn from_tag(tag: u8) -> Option<Mark> {
        Some(match tag {
            b'R' => Mark::Reading,
            b'W' => Mark::Waiting,
            b'E' => Mark::Embedding,
            b'S' => Mark::Alone,
            b'D' => Mark::Done,
            b'K' => Mark::KilledAlone,
            b'L' => Mark::Lasted,
            _ => return None,
        })
    }
}

/// What the logs of dead processes say about their files.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Verdicts {
    /// Read alone when the process died: to be set aside.
    pub culprits: Vec<PathBuf>,
    /// Read or embedded beside others when it died: to be read alone.
    pub suspects: Vec<PathBuf>,
    /// The suspects that kills from outside caught being read alone, with
    /// how many times.
    pub strikes: Vec<(PathBuf, u32)>,
}

/// This process's reading log, and the orphans it claims.
pub struct ReadingLog {
    dir: PathBuf,
    own: Mutex<Own>,
    /// Held to read with other files (shared) or alone (exclusive): a
    /// file read alone has no other pass of this process reading beside it.
    pub(crate) gate: tokio::sync::RwLock<()>,
    /// One recovery at a time, so each suspect is read once.
    pub(crate) recovering: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct Own {
    /// Opened on the first mark: a process that reads nothing leaves no log.
    file: Option<File>,
    /// How many passes have each path marked and not yet done.
    marked: HashMap<PathBuf, usize>,
    /// Suspects taken over from dead processes and not yet read alone.
    suspects: Vec<PathBuf>,
}

impl ReadingLog {
    /// The logs live in `dir`, created when first needed.
    fn new(dir: PathBuf) -> ReadingLog {
        ReadingLog {
            dir,
            own: Mutex::default(),
            gate: tokio::sync::RwLock::new(()),
            recovering: tokio::sync::Mutex::new(()),
        }
    }

    /// This process's log in `dir`. Libraries opened on one data directory
    /// share it: two writers of one `<pid>.log` would each empty it when
    /// their own files were done.
    pub fn shared(dir: PathBuf) -> Arc<ReadingLog> {
        static OPEN: Mutex<Vec<Weak<ReadingLog>>> = Mutex::new(Vec::new());
        let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
        open.retain(|log| log.strong_count() > 0);
        if let Some(log) = open.iter().filter_map(Weak::upgrade).find(|l| l.dir == dir) {
            return log;
        }
        let log = Arc::new(ReadingLog::new(dir));
        open.push(Arc::downgrade(&log));
        log
    }

    /// Where the logs are.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn own_path(&self) -> PathBuf {
        self.dir.join(format!("{}.log", std::process::id()))
    }

    fn lock(&self) -> MutexGuard<'_, Own> {
        // A panic while holding the lock leaves the map as it was: usable.
        self.own.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Appends `mark` for each of `paths` in one write. `Done` or `Lasted`
    /// for a path nothing marked is skipped; once nothing is marked the log
    /// is emptied.
    pub fn mark<'p>(
        &self,
        mark: Mark,
        paths: impl IntoIterator<Item = &'p Path>,
    ) -> io::Result<()> {
        let mut own = self.lock();
        let mut lines = Vec::new();
        for path in paths {
            if mark == Mark::Done {
                match own.marked.get_mut(path) {
                    None => continue,
                    Some(1) => {
                        own.marked.remove(path);
                    }
                    Some(n) => *n -= 1,
                }
            } else if matches!(mark, Mark::Reading | Mark::Alone) {
                *own.marked.entry(path.to_path_buf()).or_default() += 1;
            } else if mark == Mark::Lasted && !own.marked.contains_key(path) {
                continue;
            }
            lines.push(mark.tag());
            lines.push(b' ');
            lines.extend(hex(path.as_os_str().as_bytes()));
            lines.push(b'\n');
        }
        if lines.is_empty() {
            return Ok(());
        }
        if own.file.is_none() {
            std::fs::create_dir_all(&self.dir)?;
            let file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(self.own_path())?;
            crate::crash_signal::watch(file.as_raw_fd());
            own.file = Some(file);
        }
        let idle = own.marked.is_empty();
        let file = own.file.as_mut().expect("opened above");
        if idle {
            // Nothing in progress: what the log holds can blame no one.
            file.set_len(0)
        } else {
            file.write_all(&lines)
        }
    }

    /// Claims the logs of processes that died and says what they were
    /// doing. Claimed logs are kept (under this process's id) until
    /// [`ReadingLog::forget_claimed`], so if this process dies before it
    /// has dealt with them, the next one finds them again.
    pub fn claim_orphans(&self) -> io::Result<(Verdicts, Vec<PathBuf>)> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Default::default()),
            Err(e) => return Err(e),
        };
        let me = std::process::id();
        let mut claimed = Vec::new();
        for entry in entries {
            let entry = entry?;
            let name = entry.file_name();
            let Some(owner) = owner_of(&name.to_string_lossy()) else {
                continue;
            };
            if folio_core::process::alive(owner) {
                // Alive, or ours: claimed earlier and still being dealt with.
                continue;
            }
            let to = self
                .dir
                .join(format!("{me}.from-{}", name.to_string_lossy()));
            match std::fs::rename(entry.path(), &to) {
                Ok(()) => claimed.push(to),
                // Another process claimed it first.
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            }
        }
        let mut logs = Vec::with_capacity(claimed.len());
        for path in &claimed {
            logs.push(std::fs::read(path)?);
        }
        Ok((verdicts(&logs), claimed))
    }

    /// Takes over the suspects a dead process left: they are marked in
    /// this process's log (so they stay suspects if it dies too, with their
    /// strikes) and wait for [`ReadingLog::next_suspect`].
    pub fn inherit(&self, verdicts: &Verdicts) -> io::Result<()> {
        let fresh: Vec<PathBuf> = {
            let own = self.lock();
            verdicts
                .suspects
                .iter()
                .filter(|p| !own.suspects.contains(p))
                .cloned()
                .collect()
        };
        self.mark(Mark::Reading, fresh.iter().map(PathBuf::as_path))?;
        let strikes = verdicts
            .strikes
            .iter()
            .filter(|(p, _)| fresh.contains(p))
            .flat_map(|(p, n)| std::iter::repeat_n(p.as_path(), *n as usize));
        self.mark(Mark::KilledAlone, strikes)?;
        self.lock().suspects.extend(fresh);
        Ok(())
    }

    /// The next inherited suspect to read alone; it stays pending, across
    /// a stopped pass, until [`ReadingLog::settle_suspect`].
    pub fn next_suspect(&self) -> Option<PathBuf> {
        self.lock().suspects.first().cloned()
    }

    /// A suspect read alone without a crash is cleared.
    pub fn settle_suspect(&self, path: &Path) -> io::Result<()> {
        self.lock().suspects.retain(|p| p != path);
        self.mark(Mark::Done, [path])
    }

    /// Deletes logs claimed by [`ReadingLog::claim_orphans`] once what they
    /// said is recorded elsewhere (culprits in the index, suspects marked
    /// in this process's own log).
    pub fn forget_claimed(&self, claimed: &[PathBuf]) -> io::Result<()> {
        for path in claimed {
            match std::fs::remove_file(path) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        Ok(())
    }
}

impl Drop for ReadingLog {
    fn drop(&mut self) {
        let own = self.lock();
        if let Some(file) = &own.file {
            crate::crash_signal::forget(file.as_raw_fd());
            if own.marked.is_empty() {
                // Nothing in progress: no log to leave behind. (One left
                // by an exit that skips this is claimed and deleted by the
                // next start.)
                let _ = std::fs::remove_file(self.own_path());
            }
        }
    }
}

/// The process a log belongs to: the number its name starts with.
fn owner_of(name: &str) -> Option<i64> {
    name.split('.').next()?.parse().ok()
}

/// What one dead process's log says: each path's last mark, its strikes
/// so far, whether its last lone read had lasted, and whether the process
/// crashed.
#[derive(Default)]
struct LogState {
    last: HashMap<PathBuf, Mark>,
    strikes: HashMap<PathBuf, u32>,
    lasted: HashSet<PathBuf>,
    crashed: bool,
}

fn read_log(log: &[u8]) -> LogState {
    let mut state = LogState::default();
    // A line cut short by the death is ignored.
    for line in log.split(|&b| b == b'\n') {
        if line == &crate::crash_signal::CRASH_LINE[..1] {
            state.crashed = true;
            continue;
        }
        let (Some(&tag), Some(rest)) = (line.first(), line.get(2..)) else {
            continue;
        };
        let (Some(mark), Some(bytes)) = (Mark::from_tag(tag), unhex(rest)) else {
            continue;
        };
        let path = PathBuf::from(std::ffi::OsString::from_vec(bytes));
        match mark {
            Mark::KilledAlone => *state.strikes.entry(path).or_default() += 1,
            Mark::Lasted => {
                state.lasted.insert(path);
            }
            _ => {
                if mark == Mark::Alone {
                    state.lasted.remove(&path);
                }
                state.last.insert(path, mark);
            }
        }
    }
    state
}

/// The verdicts of the module's contract, over every orphaned log.
fn verdicts(logs: &[Vec<u8>]) -> Verdicts {
    let mut culprits = HashSet::new();
    let mut suspects = HashSet::new();
    let mut strikes: HashMap<PathBuf, u32> = HashMap::new();
    for log in logs {
        let state = read_log(log);
        let in_progress: Vec<(&PathBuf, Mark)> = state
            .last
            .iter()
            .map(|(p, m)| (p, *m))
            .filter(|(_, m)| matches!(m, Mark::Reading | Mark::Embedding | Mark::Alone))
            .collect();
        let only_one = in_progress.len() == 1;
        for (path, mark) in in_progress {
            let before = state.strikes.get(path).copied().unwrap_or(0);
            let (blamed, now) = match mark {
                Mark::Alone if state.crashed => (true, before),
                Mark::Alone => {
                    let needed = match state.lasted.contains(path) {
                        true => STRIKES_LASTING,
                        false => STRIKES_QUICK,
                    };
                    (before + 1 >= needed, before + 1)
                }
                _ => (state.crashed && only_one, before),
            };
            if blamed {
                culprits.insert(path.clone());
                continue;
            }
            if now > 0 {
                let most = strikes.entry(path.clone()).or_default();
                *most = (*most).max(now);
            }
            suspects.insert(path.clone());
        }
    }
    let mut suspects: Vec<PathBuf> = suspects
        .into_iter()
        .filter(|p| !culprits.contains(p))
        .collect();
    suspects.sort();
    let mut strikes: Vec<(PathBuf, u32)> = strikes
        .into_iter()
        .filter(|(p, _)| !culprits.contains(p))
        .collect();
    strikes.sort();
    let mut culprits: Vec<PathBuf> = culprits.into_iter().collect();
    culprits.sort();
    Verdicts {
        culprits,
        suspects,
        strikes,
    }
}

fn hex(bytes: &[u8]) -> impl Iterator<Item = u8> + '_ {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    bytes
        .iter()
        .flat_map(|b| [DIGITS[(b >> 4) as usize], DIGITS[(b & 15) as usize]])
}

fn unhex(text: &[u8]) -> Option<Vec<u8>> {
    if text.len() % 2 != 0 {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    text.chunks(2)
        .map(|pair| Some(digit(pair[0])? << 4 | digit(pair[1])?))
        .collect()
}

/// The marks one indexing pass holds: whatever it has not marked done
/// when it ends (an error, a stop) is marked done then, since an error
/// that did not kill the process blames no file.
pub(crate) struct PassMarks {
    log: Arc<ReadingLog>,
    held: Mutex<HashSet<PathBuf>>,
}

impl PassMarks {
    pub(crate) fn new(log: Arc<ReadingLog>) -> PassMarks {
        PassMarks {
            log,
            held: Mutex::default(),
        }
    }

    fn held(&self) -> MutexGuard<'_, HashSet<PathBuf>> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks files this pass starts or moves on.
    pub(crate) fn mark<'p>(
        &self,
        mark: Mark,
        paths: impl IntoIterator<Item = &'p Path>,
    ) -> io::Result<()> {
        let mut held = self.held();
        let paths: Vec<&Path> = match mark {
            // A path this pass holds already needs no second start.
            Mark::Reading | Mark::Alone => paths
                .into_iter()
                .filter(|p| held.insert(p.to_path_buf()))
                .collect(),
            Mark::Done => paths.into_iter().filter(|p| held.remove(*p)).collect(),
            Mark::Lasted => paths.into_iter().filter(|p| held.contains(*p)).collect(),
            Mark::Waiting | Mark::Embedding | Mark::KilledAlone => paths.into_iter().collect(),
        };
        drop(held);
        self.log.mark(mark, paths)
    }

    /// Marks `path`, just marked [`Mark::Alone`], as lasted once
    /// [`LASTING`] has passed, if this pass still holds it then.
    pub(crate) fn time_lone_read(self: &Arc<Self>, path: PathBuf) {
        let marks = Arc::downgrade(self);
        tokio::spawn(async move {
            tokio::time::sleep(LASTING).await;
            if let Some(marks) = marks.upgrade() {
                // A failed write costs a strike's weight, nothing more.
                let _ = marks.mark(Mark::Lasted, [path.as_path()]);
            }
        });
    }
}

impl Drop for PassMarks {
    fn drop(&mut self) {
        let left: Vec<PathBuf> = self.held().drain().collect();
        // Nothing to report to: a failed write leaves suspects, read alone
        // by the next pass, which costs time but loses nothing.
        let _ = self.log.mark(Mark::Done, left.iter().map(PathBuf::as_path));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(mark: Mark, path: &str) -> Vec<u8> {
        let mut l = vec![mark.tag(), b' '];
        l.extend(hex(path.as_bytes()));
        l.push(b'\n');
        l
    }

    fn log(lines: &[(Mark, &str)]) -> Vec<u8> {
        lines.iter().flat_map(|(m, p)| line(*m, p)).collect()
    }

    fn paths(names: &[&str]) -> Vec<PathBuf> {
        names.iter().map(PathBuf::from).collect()
    }

    fn crashed(mut log: Vec<u8>) -> Vec<u8> {
        log.extend(crate::crash_signal::CRASH_LINE);
        log
    }

    #[test]
    fn a_kill_makes_suspects_of_the_files_in_progress_and_blames_none() {
        let killed = log(&[
            (Mark::Reading, "/a"),
            (Mark::Reading, "/b"),
            (Mark::Waiting, "/a"),
            (Mark::Reading, "/c"),
            (Mark::Embedding, "/a"),
            (Mark::Reading, "/d"),
            (Mark::Waiting, "/d"),
            (Mark::Done, "/c"),
        ]);
        let killed_alone = log(&[(Mark::Alone, "/e"), (Mark::Done, "/e"), (Mark::Alone, "/f")]);
        assert_eq!(
            verdicts(&[killed, killed_alone]),
            Verdicts {
                culprits: vec![],
                suspects: paths(&["/a", "/b", "/f"]),
                strikes: vec![(PathBuf::from("/f"), 1)],
            }
        );
    }

    #[test]
    fn a_crash_blames_the_file_read_alone_or_the_only_one_in_progress() {
        // An inherited suspect not reached yet is no more than that.
        let alone = crashed(log(&[(Mark::Reading, "/x"), (Mark::Alone, "/y")]));
        let found = verdicts(&[alone]);
        assert_eq!(
            (found.culprits, found.suspects),
            (paths(&["/y"]), paths(&["/x"]))
        );
        let only = crashed(log(&[
            (Mark::Reading, "/a"),
            (Mark::Waiting, "/a"),
            (Mark::Reading, "/b"),
        ]));
        assert_eq!(verdicts(&[only]).culprits, paths(&["/b"]));
        let two = crashed(log(&[(Mark::Reading, "/a"), (Mark::Embedding, "/b")]));
        assert_eq!(
            verdicts(&[two]),
            Verdicts {
                culprits: vec![],
                suspects: paths(&["/a", "/b"]),
                strikes: vec![],
            }
        );
    }

    #[test]
    fn killed_alone_twice_after_lasting_or_five_times_is_the_culprit() {
        let strike = |n: u32, lasted: bool| {
            let mut lines = vec![(Mark::Reading, "/f")];
            lines.extend((0..n).map(|_| (Mark::KilledAlone, "/f")));
            lines.push((Mark::Alone, "/f"));
            if lasted {
                lines.push((Mark::Lasted, "/f"));
            }
            verdicts(&[log(&lines)])
        };
        assert_eq!(strike(1, true).culprits, paths(&["/f"]));
        // Caught at once: a person quitting just after a start, maybe.
        let quick = strike(3, false);
        assert!(quick.culprits.is_empty());
        assert_eq!(quick.strikes, vec![(PathBuf::from("/f"), 4)]);
        assert_eq!(strike(4, false).culprits, paths(&["/f"]));
        // Inherited and not yet reached when killed: no new strike.
        let waiting = log(&[(Mark::Reading, "/f"), (Mark::KilledAlone, "/f")]);
        assert_eq!(verdicts(&[waiting]).strikes, vec![(PathBuf::from("/f"), 1)]);
        // An earlier lone read's lasting says nothing of the last one.
        let earlier = log(&[
            (Mark::Alone, "/f"),
            (Mark::Lasted, "/f"),
            (Mark::KilledAlone, "/f"),
            (Mark::Alone, "/f"),
        ]);
        assert!(verdicts(&[earlier]).culprits.is_empty());
    }

    #[tokio::test]
    async fn a_lone_read_that_lasts_is_marked_so_and_a_finished_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let log = Arc::new(ReadingLog::new(dir.path().to_path_buf()));
        let (slow, quick) = (Path::new("/slow"), Path::new("/quick"));
        let pass = Arc::new(PassMarks::new(log.clone()));
        pass.mark(Mark::Alone, [quick]).unwrap();
        pass.time_lone_read(quick.to_path_buf());
        pass.mark(Mark::Done, [quick]).unwrap();
        pass.mark(Mark::Alone, [slow]).unwrap();
        pass.time_lone_read(slow.to_path_buf());
        tokio::time::sleep(LASTING * 3).await;
        let state = read_log(&std::fs::read(log.own_path()).unwrap());
        assert!(state.lasted.contains(slow));
        assert!(!state.lasted.contains(quick));
    }

    #[test]
    fn inherited_suspects_keep_their_strikes() {
        let dir = tempfile::tempdir().unwrap();
        let log = ReadingLog::new(dir.path().to_path_buf());
        let found = Verdicts {
            culprits: vec![],
            suspects: paths(&["/a", "/f"]),
            strikes: vec![(PathBuf::from("/f"), 2)],
        };
        log.inherit(&found).unwrap();
        let state = read_log(&std::fs::read(log.own_path()).unwrap());
        assert_eq!(state.strikes, HashMap::from([(PathBuf::from("/f"), 2)]));
        assert_eq!(log.next_suspect(), Some(PathBuf::from("/a")));
    }

    #[test]
    fn a_culprit_in_one_log_is_no_suspect_in_another_and_a_torn_line_is_ignored() {
        let first = log(&[(Mark::Reading, "/x"), (Mark::Reading, "/y")]);
        let mut second = log(&[(Mark::Reading, "/y"), (Mark::Alone, "/x")]);
        second.extend(b"X\nS 2f7"); // cut off mid-line
        assert_eq!(
            verdicts(&[first, second]),
            Verdicts {
                culprits: paths(&["/x"]),
                suspects: paths(&["/y"]),
                strikes: vec![],
            }
        );
    }

    #[test]
    fn names_that_are_not_text_survive_the_log() {
        let name = std::ffi::OsString::from_vec(b"/tmp/caf\xe9\n.txt".to_vec());
        let mut l = vec![b'S', b' '];
        l.extend(hex(name.as_bytes()));
        l.push(b'\n');
        assert_eq!(verdicts(&[crashed(l)]).culprits, vec![PathBuf::from(name)]);
    }

    #[test]
    fn orphans_are_claimed_once_and_a_live_log_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let log = ReadingLog::new(dir.path().to_path_buf());
        log.mark(Mark::Reading, [Path::new("/mine")]).unwrap();
        // pid 0 never names a user process, and the kernel caps pids
        // below this one.
        let dead = dir.path().join("4194999.log");
        std::fs::write(&dead, crashed(line(Mark::Alone, "/bad"))).unwrap();
        let (found, claimed) = log.claim_orphans().unwrap();
        assert_eq!(found.culprits, paths(&["/bad"]));
        assert!(found.suspects.is_empty(), "our own log is not an orphan");
        assert!(!dead.exists());
        let (again, _) = log.claim_orphans().unwrap();
        assert_eq!(again, Verdicts::default(), "claimed logs are ours now");
        log.forget_claimed(&claimed).unwrap();
        assert!(claimed.iter().all(|p| !p.exists()));
    }

    #[test]
    fn the_log_empties_when_nothing_is_marked() {
        let dir = tempfile::tempdir().unwrap();
        let log = Arc::new(ReadingLog::new(dir.path().to_path_buf()));
        let pass = PassMarks::new(log.clone());
        let (a, b) = (Path::new("/a"), Path::new("/b"));
        pass.mark(Mark::Reading, [a, b]).unwrap();
        pass.mark(Mark::Waiting, [a]).unwrap();
        let file = log.own_path();
        assert!(std::fs::metadata(&file).unwrap().len() > 0);
        pass.mark(Mark::Done, [a]).unwrap();
        assert!(
            std::fs::metadata(&file).unwrap().len() > 0,
            "/b is still read"
        );
        drop(pass);
        assert_eq!(std::fs::metadata(&file).unwrap().len(), 0);
    }
}
