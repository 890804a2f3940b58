/**
 * Finds the Python interpreter that runs the server: the `specContract.interpreter` setting, else the active
 * interpreter of the Python extension (`ms-python.python`), else `python3` on PATH (looked up here, so that
 * every message names the full path and where it came from). The server itself ships in the extension
 * (`bundled/`, see bundled/tool/server.py): `probeBundled` asks the interpreter whether it can run it; with
 * `specContract.importStrategy` set to `fromEnvironment`, `checkPackage` asks whether `spec_contract` is
 * installed there instead.
 *
 * Every Python the extension starts runs with `-I` (isolated mode). The server's working directory is the
 * workspace folder, and a plain `python -m …` or `python -c …` looks there first for every module it imports:
 * a `spec_contract.py`, `argparse.py`, `typing.py` or `runpy.py` in the workspace would run. `-I` keeps that
 * directory off `sys.path` (`-P` would too, but only from Python 3.11; the server supports 3.10), and the
 * interpreter passes it on to the processes the server starts (multiprocessing's fork server, for one). It
 * also ignores PYTHON* variables and the user site-packages; `checkPackage` tells when spec-contract is only
 * there.
 */
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';

/** The part of the Python extension's API that is used here (see `@vscode/python-extension`). */
interface PythonExtensionApi {
    environments: {
        getActiveEnvironmentPath(resource?: vscode.Uri): { id: string; path: string };
        resolveEnvironment(env: { id: string; path: string }): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
        onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
    };
}

export type InterpreterSource = 'setting specContract.interpreter' | 'Python extension' | 'PATH' | 'not found on PATH';

export interface Interpreter {
    path: string;
    source: InterpreterSource;
}

const PYTHON_EXTENSION_ID = 'ms-python.python';

async function pythonApi(): Promise<PythonExtensionApi | undefined> {
    const extension = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
    if (!extension) {
        return undefined;
    }
    const api = extension.isActive ? extension.exports : await extension.activate();
    return api?.environments ? api : undefined;
}

export function hasPythonExtension(): boolean {
    return vscode.extensions.getExtension(PYTHON_EXTENSION_ID) !== undefined;
}

export async function resolveInterpreter(configured: string, folder?: vscode.WorkspaceFolder): Promise<Interpreter> {
    if (configured) {
        return { path: configured, source: 'setting specContract.interpreter' };
    }
    try {
        const api = await pythonApi();
        if (api) {
            const env = await api.environments.resolveEnvironment(api.environments.getActiveEnvironmentPath(folder?.uri));
            const executable = env?.executable.uri?.fsPath;
            if (executable) {
                return { path: executable, source: 'Python extension' };
            }
        }
    } catch {
        // A Python extension that fails to answer is treated like no Python extension.
    }
    const name = process.platform === 'win32' ? 'python' : 'python3';
    const found = findOnPath(name);
    return found ? { path: found, source: 'PATH' } : { path: name, source: 'not found on PATH' };
}

/** The first executable `name` on the extension host's PATH (which is the login shell's, not a terminal's). */
export function findOnPath(name: string): string | undefined {
    const extensions = process.platform === 'win32' ? ['.exe', ''] : [''];
    for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
        for (const extension of extensions) {
            const candidate = path.join(dir, name + extension);
            try {
                fs.accessSync(candidate, fs.constants.X_OK);
                if (fs.statSync(candidate).isFile()) {
                    return candidate;
                }
            } catch {
                // not there: the next PATH entry
            }
        }
    }
    return undefined;
}

/** Where an interpreter came from, in words a message can end with. */
export function describe(interpreter: Interpreter): string {
    if (interpreter.source === 'not found on PATH') {
        return `"${interpreter.path}", which is not on the PATH of VS Code's extension host (PATH=${process.env.PATH ?? ''})`;
    }
    return `${interpreter.path} (from ${interpreter.source})`;
}

/** The launcher of the server this extension carries (bundled/tool/server.py, next to dist/). */
export const BUNDLED_SERVER = path.join(__dirname, '..', 'bundled', 'tool', 'server.py');

/**
 * The arguments that run spec-contract's command line with an interpreter: the installed package when
 * `importStrategy` is `fromEnvironment` and it imports there under `-I`, else the launcher of the bundled one.
 */
export async function commandLine(python: string, importStrategy: 'useBundled' | 'fromEnvironment'): Promise<string[]> {
    if (importStrategy === 'fromEnvironment' && (await checkPackage(python)).ok) {
        return [ISOLATED, '-m', 'spec_contract'];
    }
    return [ISOLATED, BUNDLED_SERVER];
}

export type BundledProbe =
    | { ok: true; executable: string; version: string; quickFixes: boolean }
    | { ok: false; problem: 'no-interpreter' | 'unsupported'; detail: string };

/** Runs `<python> -I bundled/tool/server.py --probe`: can this interpreter run the bundled server? */
export function probeBundled(python: string): Promise<BundledProbe> {
    return new Promise((resolve) => {
        execFile(python, [ISOLATED, BUNDLED_SERVER, '--probe'], { timeout: 30_000, cwd: __dirname }, (error, stdout, stderr) => {
            if (error && (error as NodeJS.ErrnoException).code === 'ENOENT') {
                resolve({ ok: false, problem: 'no-interpreter', detail: `${python} was not found` });
            } else if (error) {
                resolve({ ok: false, problem: 'unsupported', detail: (stderr || error.message).trim() });
            } else {
                try {
                    resolve({ ok: true, ...JSON.parse(stdout.trim().split('\n').pop() ?? '') });
                } catch {
                    resolve({ ok: false, problem: 'unsupported', detail: `unexpected answer: ${stdout.trim()}` });
                }
            }
        });
    });
}

/** Calls `listener` when the Python extension's active interpreter changes (no-op without the extension). */
export async function onDidChangePythonInterpreter(listener: () => void): Promise<vscode.Disposable | undefined> {
    try {
        return (await pythonApi())?.environments.onDidChangeActiveEnvironmentPath(() => listener());
    } catch {
        return undefined;
    }
}

/** The interpreter flag every Python started by the extension gets; see the top of this file. */
export const ISOLATED = '-I';

export type PackageCheck =
    | { ok: true }
    | { ok: false; problem: 'no-interpreter' | 'missing-package' | 'only-outside-isolation' | 'broken-package'; detail: string };

/**
 * Runs `<python> -I -c "import spec_contract"`. When the package is missing there, a second run without `-I`,
 * in this extension's own directory (nothing of the workspace), tells whether it is installed only in the user
 * site-packages or on PYTHONPATH, which `-I` ignores.
 */
export async function checkPackage(python: string): Promise<PackageCheck> {
    const isolated = await importSpecContract(python, [ISOLATED]);
    if (isolated.ok || isolated.problem !== 'missing-package') {
        return isolated;
    }
    const plain = await importSpecContract(python, []);
    if (plain.ok) {
        return {
            ok: false,
            problem: 'only-outside-isolation',
            detail: `spec_contract imports in ${python} only from the user site-packages or PYTHONPATH, which "${python} ${ISOLATED}" ignores`,
        };
    }
    return isolated;
}

function importSpecContract(python: string, flags: string[]): Promise<PackageCheck> {
    return new Promise((resolve) => {
        execFile(python, [...flags, '-c', 'import spec_contract'], { timeout: 30_000, cwd: __dirname }, (error, _stdout, stderr) => {
            if (!error) {
                resolve({ ok: true });
            } else if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
                resolve({ ok: false, problem: 'no-interpreter', detail: `${python} was not found` });
            } else if (/ModuleNotFoundError: No module named 'spec_contract'/.test(stderr)) {
                resolve({ ok: false, problem: 'missing-package', detail: stderr.trim() });
            } else {
                resolve({ ok: false, problem: 'broken-package', detail: (stderr || error.message).trim() });
            }
        });
    });
}
