//! Every file of tcpdump's own test set, many deliberately malformed, reads to
//! its end or to an error naming the file and offset: never a panic, never a
//! loop without progress.

use std::path::PathBuf;

use capture::open;

/// Each frame consumes at least a record header, so no file of these sizes
/// can yield more; reaching it means the reader stopped making progress.
const MAX_FRAMES: usize = 1_000_000;

fn test_files() -> Vec<PathBuf> {
    let dir = synth::shared_captures("tcpdump-tests");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("tcpdump's test files")
        .map(|entry| entry.expect("directory entry").path())
        .collect();
    files.sort();
    files
}

/// Reads a file to the end: Ok(frames), or the error's text.
fn read_to_end(path: &str) -> Result<usize, String> {
    let mut reader = open(path).map_err(|error| error.to_string())?;
    let mut frames = 0;
    while frames < MAX_FRAMES {
        match reader.next_frame() {
            Ok(Some(frame)) => {
                assert_eq!(frame.number, frames as u64 + 1);
                assert!(frame.data.len() <= frame.original_len as usize);
                frames += 1;
            }
            Ok(None) => return Ok(frames),
            Err(error) => {
                assert_eq!(error.frames_read, frames as u64, "{error}");
                return Err(error.to_string());
            }
        }
    }
    panic!("{path}: still reading after {MAX_FRAMES} frames");
}

#[test]
fn every_tcpdump_test_file_ends_in_frames_or_a_clean_error() {
    let files = test_files();
    assert!(files.len() > 800, "expected tcpdump's 830 test files");
    let (mut ok, mut errors, mut frames) = (0, 0, 0);
    for file in &files {
        let path = file.display().to_string();
        match read_to_end(&path) {
            Ok(read) => {
                ok += 1;
                frames += read;
            }
            Err(message) => {
                errors += 1;
                assert!(message.starts_with(&format!("{path}: ")), "{message}");
                assert!(message.contains(" at byte "), "{message}");
                assert_eq!(message.lines().count(), 1, "{message}");
            }
        }
    }
    println!(
        "{} files: {ok} read to the end ({frames} frames), {errors} ended in an error",
        files.len()
    );
}
