//! The phrasings set of the task-success bench: the same kinds of small task as the original
//! set, asked the way people ask them rather than in the "In FILE, change X from A to B." form
//! the original set mostly uses. Each family is one way of asking (a switch turned on or off, a
//! number raised to a value, a line commented out, one thing used instead of another, a key set
//! to a value, a symbol renamed, a file created from words, a question over one or two files),
//! with several members so that a rule fixed for one sentence and not its family shows.

use crate::tasks::{Expect, Task};

const SETTINGS: &str = "TIMEOUT = 30\nRETRIES = 3\n";
const CONFIG: &str = "DEBUG = True\nPORT = 8000\n";
const SERVER: &str = "const port = 3000;\napp.listen(port);\n";
const PACKAGE: &str = "{\n  \"name\": \"demo\",\n  \"version\": \"1.0.0\"\n}\n";
const README: &str = "# Demo\n\nA small project that greets people.\n";
const MAKEFILE: &str = "CC = gcc\n\nall:\n\t$(CC) main.c\n";
const APP_TOML: &str = "name = \"app\"\nworkers = 2\n";
const CONSTANTS: &str = "#define MAX_USERS 10\n#define MAX_ROOMS 4\n";
const LOGGING: &str = "level: debug\nfile: app.log\n";
const TWO_THIRTIES: &str = "TIMEOUT = 30\nRETRY_DELAY = 30\n";
const REQUIREMENTS: &str = "requests\nflask\nnumpy\n";
const DOTENV: &str = "PORT=8000\nDEBUG=1\n";
const LIB_RS: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";

const fn change(
    files: &'static [(&'static str, &'static str)],
    request: &'static str,
    path: &'static str,
    want: &'static str,
) -> Task {
    Task {
        files,
        request,
        expect: Expect::File(path, want),
    }
}

const fn ask(
    files: &'static [(&'static str, &'static str)],
    request: &'static str,
    any_of: &'static [&'static str],
) -> Task {
    Task {
        files,
        request,
        expect: Expect::Answer(any_of),
    }
}

pub const PHRASINGS: &[Task] = &[
    // A switch turned on or off.
    change(
        &[("config.py", CONFIG)],
        "Turn DEBUG off in config.py",
        "config.py",
        "DEBUG = False\nPORT = 8000",
    ),
    change(
        &[("config.py", CONFIG)],
        "Disable DEBUG in config.py",
        "config.py",
        "DEBUG = False\nPORT = 8000",
    ),
    change(
        &[("flags.yaml", "beta: false\nlegacy: true\n")],
        "Turn beta on in flags.yaml",
        "flags.yaml",
        "beta: true\nlegacy: true",
    ),
    change(
        &[("settings.py", "VERBOSE = False\nTIMEOUT = 30\n")],
        "Enable VERBOSE in settings.py",
        "settings.py",
        "VERBOSE = True\nTIMEOUT = 30",
    ),
    // A number or level raised or lowered to a value.
    change(
        &[("constants.h", CONSTANTS)],
        "Increase MAX_USERS in constants.h to 50",
        "constants.h",
        "#define MAX_USERS 50\n#define MAX_ROOMS 4",
    ),
    change(
        &[("app.toml", APP_TOML)],
        "Raise workers in app.toml to 4",
        "app.toml",
        "name = \"app\"\nworkers = 4",
    ),
    change(
        &[("settings.py", SETTINGS)],
        "Reduce RETRIES in settings.py to 1",
        "settings.py",
        "TIMEOUT = 30\nRETRIES = 1",
    ),
    change(
        &[("logging.yaml", LOGGING)],
        "Lower the log level in logging.yaml from debug to info",
        "logging.yaml",
        "level: info\nfile: app.log",
    ),
    // A line commented out, uncommented or removed.
    Task {
        files: &[("main.py", "import sys\nprint(\"debug\")\nsys.exit(0)\n")],
        request: "Comment out the print statement in main.py",
        expect: Expect::FileAnyOf(
            "main.py",
            &[
                "import sys\n# print(\"debug\")\nsys.exit(0)",
                "import sys\n#print(\"debug\")\nsys.exit(0)",
            ],
        ),
    },
    Task {
        files: &[("app.js", "console.log(\"start\");\nrun();\n")],
        request: "Comment out the console.log line in app.js",
        expect: Expect::FileAnyOf(
            "app.js",
            &[
                "// console.log(\"start\");\nrun();",
                "//console.log(\"start\");\nrun();",
            ],
        ),
    },
    change(
        &[("main.py", "# print(\"debug\")\nrun()\n")],
        "Uncomment the print line in main.py",
        "main.py",
        "print(\"debug\")\nrun()",
    ),
    change(
        &[("requirements.txt", REQUIREMENTS)],
        "Remove flask from requirements.txt",
        "requirements.txt",
        "requests\nnumpy",
    ),
    change(
        &[(".env", DOTENV)],
        "Delete the DEBUG line from .env",
        ".env",
        "PORT=8000",
    ),
    // One thing used instead of another.
    change(
        &[("Makefile", MAKEFILE)],
        "In the Makefile, use clang instead of gcc",
        "Makefile",
        "CC = clang\n\nall:\n\t$(CC) main.c",
    ),
    change(
        &[("Dockerfile", "FROM python:3.10\nCOPY . /app\n")],
        "Use python:3.12 instead of python:3.10 in the Dockerfile",
        "Dockerfile",
        "FROM python:3.12\nCOPY . /app",
    ),
    change(
        &[("style.css", "body { color: red; }\n")],
        "Make the text blue instead of red in style.css",
        "style.css",
        "body { color: blue; }",
    ),
    // "change A to B" without the original's comma, in other orders, with values of several
    // words, and with the old value on two lines.
    change(
        &[("settings.py", SETTINGS)],
        "In settings.py change TIMEOUT from 30 to 60.",
        "settings.py",
        "TIMEOUT = 60\nRETRIES = 3",
    ),
    change(
        &[("settings.py", SETTINGS)],
        "change TIMEOUT from 30 to 60 in settings.py",
        "settings.py",
        "TIMEOUT = 60\nRETRIES = 3",
    ),
    change(
        &[("server.js", SERVER)],
        "server.js: change the port from 3000 to 8080",
        "server.js",
        "const port = 8080;\napp.listen(port);",
    ),
    change(
        &[("settings.py", TWO_THIRTIES)],
        "In settings.py, change the timeout from 30 to 60.",
        "settings.py",
        "TIMEOUT = 60\nRETRY_DELAY = 30",
    ),
    change(
        &[("settings.py", TWO_THIRTIES)],
        "In settings.py, change RETRY_DELAY from 30 to 5.",
        "settings.py",
        "TIMEOUT = 30\nRETRY_DELAY = 5",
    ),
    change(
        &[("index.html", "<h1>Hello World</h1>\n")],
        "In index.html, change the heading from Hello World to Welcome Home",
        "index.html",
        "<h1>Welcome Home</h1>",
    ),
    change(
        &[("README.md", README)],
        "Replace \"greets people\" with \"welcomes visitors\" in README.md",
        "README.md",
        "# Demo\n\nA small project that welcomes visitors.",
    ),
    change(
        &[("main.py", "print(\"Hello\")\n")],
        "Replace Hello with Hi in main.py",
        "main.py",
        "print(\"Hi\")",
    ),
    // A key set to a value, the old value left unsaid.
    change(
        &[("settings.py", SETTINGS)],
        "Set TIMEOUT to 60 in settings.py",
        "settings.py",
        "TIMEOUT = 60\nRETRIES = 3",
    ),
    change(
        &[("package.json", PACKAGE)],
        "Bump the version in package.json to 1.2.0",
        "package.json",
        "{\n  \"name\": \"demo\",\n  \"version\": \"1.2.0\"\n}",
    ),
    change(
        &[("server.js", SERVER)],
        "Change the port in server.js to 8080",
        "server.js",
        "const port = 8080;\napp.listen(port);",
    ),
    change(
        &[("app.toml", APP_TOML)],
        "Set workers to 8 in app.toml",
        "app.toml",
        "name = \"app\"\nworkers = 8",
    ),
    change(
        &[("config.py", CONFIG)],
        "Make PORT 9000 in config.py",
        "config.py",
        "DEBUG = True\nPORT = 9000",
    ),
    change(
        &[(".env", DOTENV)],
        "Set PORT=9000 in .env",
        ".env",
        "PORT=9000\nDEBUG=1",
    ),
    change(
        &[(
            "Cargo.toml",
            "[package]\nname = \"demo\"\nversion = \"0.1.0\"\n",
        )],
        "Update the version in Cargo.toml to 0.2.0",
        "Cargo.toml",
        "[package]\nname = \"demo\"\nversion = \"0.2.0\"",
    ),
    // A symbol renamed inside a file (never the file itself).
    change(
        &[("src/lib.rs", LIB_RS)],
        "Rename the function add to sum in src/lib.rs",
        "src/lib.rs",
        "pub fn sum(a: i32, b: i32) -> i32 {\n    a + b\n}",
    ),
    change(
        &[("util.py", "def greet(name):\n    return 'hi ' + name\n")],
        "Rename greet to welcome in util.py",
        "util.py",
        "def welcome(name):\n    return 'hi ' + name",
    ),
    change(
        &[("app.js", "function start() {\n  return 1;\n}\n")],
        "In app.js rename the function start to begin",
        "app.js",
        "function begin() {\n  return 1;\n}",
    ),
    // A file created from words: names without a dot, dotfiles, other verbs.
    change(&[], "Create LICENSE containing MIT", "LICENSE", "MIT"),
    change(
        &[],
        "Create .gitignore with the lines target/ and *.log",
        ".gitignore",
        "target/\n*.log",
    ),
    change(&[], "Make a file hello.txt that says hi", "hello.txt", "hi"),
    change(
        &[],
        "Add a file notes.md with the text: remember the milk",
        "notes.md",
        "remember the milk",
    ),
    change(&[], "Write 42 to answer.txt", "answer.txt", "42"),
    change(&[], "Create .nvmrc containing 20", ".nvmrc", "20"),
    // A file moved or renamed.
    Task {
        files: &[("old.txt", "keep me\n")],
        request: "Move old.txt to new.txt",
        expect: Expect::Renamed("old.txt", "new.txt", "keep me"),
    },
    Task {
        files: &[("notes.txt", "- milk\n")],
        request: "rename notes.txt as notes.md",
        expect: Expect::Renamed("notes.txt", "notes.md", "- milk"),
    },
    // Questions, over one file or two.
    Task {
        files: &[("package.json", PACKAGE), ("VERSION", "1.1.0\n")],
        request: "Do package.json and VERSION agree on the version?",
        expect: Expect::AnswerAll(&["1.0.0", "1.1.0"]),
    },
    ask(
        &[("config.py", CONFIG)],
        "Is DEBUG on in config.py?",
        &["True", "yes"],
    ),
    ask(
        &[("settings.py", SETTINGS)],
        "What's the timeout in settings.py",
        &["30"],
    ),
    ask(
        &[("app.toml", APP_TOML)],
        "How many workers does app.toml configure?",
        &["2"],
    ),
    ask(
        &[("Makefile", MAKEFILE)],
        "Which compiler does the Makefile use?",
        &["gcc"],
    ),
    ask(
        &[("main.py", "print(\"Hello\")\n")],
        "What does main.py print?",
        &["Hello"],
    ),
    ask(
        &[("server.js", SERVER)],
        "Tell me the port in server.js",
        &["3000"],
    ),
    ask(
        &[("logging.yaml", LOGGING)],
        "Which log level is set in logging.yaml?",
        &["debug"],
    ),
    ask(
        &[("constants.h", CONSTANTS)],
        "What is MAX_USERS in constants.h?",
        &["10"],
    ),
    Task {
        files: &[("requirements.txt", REQUIREMENTS)],
        request: "Which packages are listed in requirements.txt?",
        expect: Expect::AnswerAll(&["requests", "flask", "numpy"]),
    },
];
