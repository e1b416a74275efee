//! Which programs a bot's `run.sh` starts, by a static scan, so `arena
//! play` can name one the environment lacks before the match instead of
//! reporting a forfeit on turn 0.
//!
//! This is not a shell parser. It reads the `#!` interpreter and, on every
//! line that begins a simple command, the command word (after `exec`,
//! `command`, `nohup`, `env` and variable assignments). Anything it cannot
//! be sure of is left out rather than guessed: words with expansions or
//! quotes, paths (`./bot` is made by `build.sh`), shell keywords and
//! builtins, functions the script defines, continuation lines, and here
//! documents. A name it reports is therefore one the script really names as
//! a command; whether that line runs is for the shell to decide.

/// Words that start no program: shell keywords and POSIX/dash builtins.
const SHELL_WORDS: &[&str] = &[
    "!", ".", ":", "[", "[[", "]]", "{", "}", "alias", "bg", "break", "case", "cd", "continue",
    "do", "done", "echo", "elif", "else", "esac", "eval", "exit", "export", "false", "fg", "fi",
    "for", "function", "getopts", "hash", "if", "in", "jobs", "kill", "local", "printf", "pwd",
    "read", "readonly", "return", "select", "set", "shift", "source", "test", "then", "times",
    "trap", "true", "type", "ulimit", "umask", "unalias", "unset", "until", "wait", "while",
];

/// Words that run the next word as the program.
const PREFIXES: &[&str] = &[
    "exec", "command", "nohup", "env", "then", "do", "else", "time",
];

/// The programs `script` names as commands, by bare name, in order of
/// first appearance, each once.
pub fn programs_started(script: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let push = |name: &str, found: &mut Vec<String>| {
        if !found.iter().any(|f| f == name) {
            found.push(name.to_owned());
        }
    };
    let functions = defined_functions(script);
    let mut continued = false;
    let mut heredoc: Option<String> = None;
    for (index, raw) in script.lines().enumerate() {
        let line = raw.trim();
        if let Some(end) = &heredoc {
            if line == end {
                heredoc = None;
            }
            continue;
        }
        let was_continued = continued;
        continued = raw.ends_with('\\');
        if index == 0
            && let Some(shebang) = line.strip_prefix("#!")
        {
            let (program, interpreter) = shebang_program(shebang);
            if let Some(name) = program {
                push(&name, &mut found);
            }
            // The rest is another language's source: nothing to scan.
            if !SHELLS.contains(&interpreter.as_str()) {
                break;
            }
            continue;
        }
        if was_continued || line.is_empty() || line.starts_with('#') {
            continue;
        }
        heredoc = heredoc_end(line);
        if let Some(name) = command_word(line)
            && !functions.iter().any(|f| f == name)
        {
            push(name, &mut found);
        }
    }
    found
}

/// Interpreters whose scripts this scan reads.
const SHELLS: &[&str] = &["sh", "bash", "dash", "ash", "ksh", "zsh"];

/// A `#!` line: the program it needs found on the search path (the word
/// after `/usr/bin/env`; an absolute interpreter is a path, not searched),
/// and the interpreter's bare name.
fn shebang_program(shebang: &str) -> (Option<String>, String) {
    let mut words = shebang.split_whitespace();
    let interpreter = words.next().unwrap_or_default();
    let base = interpreter.rsplit('/').next().unwrap_or_default();
    if base == "env" {
        let program = words
            .find(|w| !w.starts_with('-') && !w.contains('='))
            .filter(|w| plain_word(w))
            .map(str::to_owned);
        let name = program.clone().unwrap_or_default();
        return (program, name);
    }
    (None, base.to_owned())
}

/// The command word of a line, when it is a plain program name.
fn command_word(line: &str) -> Option<&str> {
    let mut words = line.split_whitespace().peekable();
    loop {
        let word = words.next()?;
        if PREFIXES.contains(&word) {
            // `exec -a NAME prog`, `env -i prog`: skip options (and -a's value).
            while let Some(next) = words.peek() {
                if *next == "-a" {
                    words.next();
                    words.next();
                } else if next.starts_with('-') {
                    words.next();
                } else {
                    break;
                }
            }
            continue;
        }
        if is_assignment(word) {
            continue;
        }
        if SHELL_WORDS.contains(&word) || !plain_word(word) {
            return None;
        }
        return Some(word);
    }
}

/// `NAME=value`, as a shell assignment prefix.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && !name.as_bytes()[0].is_ascii_digit()
    })
}

/// A bare program name with no expansion, quoting, path or operator.
fn plain_word(word: &str) -> bool {
    !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'+'))
        && !word.starts_with(['-', '.'])
}

/// Names the script defines as functions (`name() {` or `function name`).
fn defined_functions(script: &str) -> Vec<String> {
    script
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let (line, keyword) = match line.strip_prefix("function ") {
                Some(rest) => (rest.trim_start(), true),
                None => (line, false),
            };
            let name = line.split(['(', ' ', '{']).next()?;
            let parens = line[name.len()..].trim_start().starts_with("()");
            (plain_word(name) && (keyword || parens)).then(|| name.to_owned())
        })
        .collect()
}

/// The terminator of a here document the line opens (`<<EOF`, `<<-'EOF'`).
fn heredoc_end(line: &str) -> Option<String> {
    let (_, rest) = line.split_once("<<")?;
    let rest = rest.trim_start_matches('-').trim_start();
    let word: String = rest
        .trim_start_matches(['\'', '"'])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!word.is_empty()).then_some(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_words_of_a_run_script() {
        let script = "#!/bin/sh\n# comment: python2 is not run\nset -e\ncd \"$(dirname \"$0\")\"\n\
                      PYTHONHASHSEED=0 exec python -u main.py\n";
        assert_eq!(programs_started(script), ["python"]);
        assert_eq!(
            programs_started("#!/usr/bin/env python3\nimport sys\n"),
            ["python3"]
        );
        assert_eq!(
            programs_started("#!/usr/bin/env bash\nexec pypy3 bot.py\n"),
            ["bash", "pypy3"]
        );
        assert_eq!(programs_started("exec ./bot\n"), Vec::<String>::new());
        assert_eq!(programs_started("exec \"$BOT\"\n"), Vec::<String>::new());
        assert_eq!(
            programs_started("exec env -i LANG=C java -jar bot.jar\n"),
            ["java"]
        );
        assert_eq!(
            programs_started("if true; then\n  exec node bot.js \\\n    --fast\nfi\n"),
            ["node"]
        );
        assert_eq!(
            programs_started("go() { exec ./bot; }\ngo\ncat <<EOF\nnotaprogram\nEOF\n"),
            ["cat"]
        );
    }
}
