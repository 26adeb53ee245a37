//! A project's own runners: the command words that run a tool installed for the project
//! rather than being the tool (`npx vitest`, `pnpm exec jest`, `poetry run pytest`, `uv run
//! alembic`, `bundle exec rails`, `python -m pytest`, `python manage.py flush`, `php artisan
//! migrate:fresh`). The test-tampering and database rules judge the tool, whichever runner
//! started it: [`launched`] hands back the tool's words.
//!
//! This reads only which words name the tool; what the tool is told to do is each rule's.

use crate::guard::basename;

/// The words of the tool `argv` runs through a project runner (`npx vitest run -u` →
/// `vitest run -u`), or `argv` itself when its command word is the tool. A script run by an
/// interpreter that is a project's entry point (`python manage.py ..`, `php artisan ..`,
/// `ruby bin/rails ..`) is the tool.
pub fn launched(argv: &[String]) -> &[String] {
    let mut words = argv;
    // Runners nest (`uv run python -m pytest`): a few levels at most.
    for _ in 0..4 {
        let Some(skip) = runner_words(words) else {
            return words;
        };
        if skip == 0 || skip >= words.len() {
            return words;
        }
        words = &words[skip..];
    }
    words
}

/// How many leading words of `argv` belong to a project runner, when its command word is one.
fn runner_words(argv: &[String]) -> Option<usize> {
    let name = basename(argv.first()?);
    let sub = argv.get(1).map(String::as_str).unwrap_or("");
    let n = match name {
        // `npx --yes -p pkg tool ..`: options first, `-p`/`--package` take a value.
        "npx" | "bunx" | "pnpx" => 1 + options(&argv[1..], &["-p", "--package", "-c", "--call"]),
        "pnpm" | "yarn" | "bun" | "npm" if matches!(sub, "exec" | "dlx" | "x") => {
            2 + options(&argv[2..], &["-p", "--package", "-c", "--call"])
        }
        "poetry" | "pipenv" | "pdm" | "hatch" | "rye" | "uv" | "conda" | "mamba" | "micromamba" | "pixi"
            if sub == "run" =>
        {
            2 + options(
                &argv[2..],
                &[
                    "--with",
                    "-w",
                    "--python",
                    "-p",
                    "--env",
                    "-e",
                    "-n",
                    "--name",
                    "--project",
                    "--directory",
                    "--package",
                    "--extra",
                    "--group",
                    "--env-file",
                ],
            )
        }
        "uvx" => 1 + options(&argv[1..], &["--from", "--with", "--python", "-p"]),
        "pipx" if sub == "run" => 2 + options(&argv[2..], &["--spec", "--python"]),
        "bundle" | "bundler" if sub == "exec" => 2,
        // `python -m pytest`: the module is the tool; `python manage.py`: the script is.
        n if n.starts_with("python") || n == "py" => {
            // The interpreter's own flags (`-u`, `-B`, `-W arg`), up to `-m` or the script.
            let mut own = 0;
            while let Some(a) = argv
                .get(1 + own)
                .filter(|a| a.starts_with('-') && !matches!(a.as_str(), "-m" | "-c" | "-"))
            {
                own += if matches!(a.as_str(), "-W" | "-X") { 2 } else { 1 };
            }
            match argv.get(1 + own).map(String::as_str) {
                Some("-m") => 2 + own,
                Some(script) if is_entry_script(script) => 1 + own,
                _ => return None,
            }
        }
        "php" | "ruby" if argv.get(1).is_some_and(|s| is_entry_script(s)) => 1,
        _ => return None,
    };
    Some(n)
}

/// The leading options of `args` (with the values of those in `with_value`), counted in words.
fn options(args: &[String], with_value: &[&str]) -> usize {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if a == "--" {
            return i + 1;
        }
        if !a.starts_with('-') || a == "-" {
            break;
        }
        i += if with_value.contains(&a.as_str()) { 2 } else { 1 };
    }
    i.min(args.len())
}

/// Scripts that are a project's command-line entry point: Django's `manage.py`, Laravel's
/// `artisan`, Rails' `bin/rails` and `bin/rake`, Symfony's `bin/console`.
fn is_entry_script(word: &str) -> bool {
    matches!(basename(word), "manage.py" | "artisan" | "rails" | "rake" | "console")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(line: &str) -> String {
        let argv: Vec<String> = line.split_whitespace().map(String::from).collect();
        launched(&argv).join(" ")
    }

    #[test]
    fn runners_hand_over_the_tool() {
        assert_eq!(tool("npx vitest run -u"), "vitest run -u");
        assert_eq!(
            tool("npx --yes -p sequelize-cli sequelize db:drop"),
            "sequelize db:drop"
        );
        assert_eq!(tool("pnpm exec jest --ci"), "jest --ci");
        assert_eq!(tool("poetry run python manage.py flush"), "manage.py flush");
        assert_eq!(tool("uv run --with x python -m pytest -q"), "pytest -q");
        assert_eq!(tool("bundle exec rails runner X"), "rails runner X");
        assert_eq!(tool("php artisan migrate:fresh"), "artisan migrate:fresh");
        assert_eq!(tool("./manage.py shell"), "./manage.py shell");
        assert_eq!(tool("npm test"), "npm test");
        assert_eq!(tool("python script.py"), "python script.py");
        assert_eq!(tool("npx"), "npx");
        assert_eq!(tool("python -u -m pytest -q"), "pytest -q");
        assert_eq!(tool("python -c print(1)"), "python -c print(1)");
    }
}
