;;; spec-contract-eglot.el --- Use the spec-contract language server with Eglot  -*- lexical-binding: t; -*-

;; Works with Eglot 1.9 (Debian's elpa-eglot, Emacs 28) and the Eglot built into Emacs 29+.

;;; Commentary:

;; spec-contract finds multimodal wrapper model classes that forget to forward a method the
;; speculative-decoding workers call on the model.  Loading this file makes Eglot start
;; `python3 -I -m spec_contract serve' for Python buffers (python-mode and python-ts-mode) and answers
;; the server's `specContract' settings from `spec-contract-eglot-settings'.
;;
;; Eglot starts the server in the project's root.  `-I' (isolated mode) keeps that directory off
;; `sys.path': without it a `spec_contract.py', `argparse.py' or `typing.py' in the project would run
;; when a Python file is opened.  It also ignores PYTHON* variables and the user site-packages, so
;; install spec-contract into the interpreter's own environment (a virtualenv), not with --user.
;;
;;   (load "/path/to/spec-contract-eglot.el")
;;   (add-hook 'python-mode-hook #'eglot-ensure)      ; optional: start it for every Python file
;;
;; Eglot runs one server per major mode and project, so this entry replaces the default Python
;; server (pylsp, pyright, ...) for those modes.  Per project, a .dir-locals.el can set
;; `eglot-workspace-configuration' to (:specContract (...)) instead.

;;; Code:

(require 'eglot)

(defgroup spec-contract nil
  "Keep model wrapper classes in step with the speculative-decoding workers."
  :group 'tools
  :prefix "spec-contract-")

(defcustom spec-contract-eglot-python "python3"
  "Python interpreter that has spec-contract installed (from a clone of the repository:
`python3 -m pip install ./spec-contract'; it is not on PyPI yet).
The server reads the project's sources as text, so this interpreter does not need the
project's own dependencies.  It runs in isolated mode (-I), which ignores the user
site-packages: install spec-contract into the interpreter's environment, not with --user."
  :type 'string)

(defun spec-contract-eglot--install-settings (symbol value)
  "Set SYMBOL to VALUE and put VALUE under `:specContract' in the default workspace configuration.
A default `eglot-workspace-configuration' that is a function or an alist is the user's own
arrangement and is left alone; .dir-locals.el values still win per project."
  (set-default symbol value)
  (let ((config (default-value 'eglot-workspace-configuration)))
    (when (or (null config) (keywordp (car-safe config)))
      (setq-default eglot-workspace-configuration
                    ;; An empty hash table is sent as {}, where nil would be sent as null.
                    (plist-put (copy-sequence config) :specContract
                               (or value (make-hash-table)))))))

(defcustom spec-contract-eglot-settings nil
  "The `specContract' settings section the server asks for, as a plist.
nil sends an empty section: the server's defaults and the project's
`[tool.spec-contract]' table in pyproject.toml apply."
  :type '(plist :key-type keyword)
  :set #'spec-contract-eglot--install-settings)

(defun spec-contract-eglot-contact (&optional _interactive)
  "Command line that starts the server; Eglot calls this each time it starts one.
-I keeps the project directory, where Eglot starts it, off `sys.path', so that no file in
the project can stand in for a module the server imports."
  (list spec-contract-eglot-python "-I" "-m" "spec_contract" "serve"))

;; One entry for both modes, so that python-mode and python-ts-mode buffers share one server.
(add-to-list 'eglot-server-programs
             '((python-mode python-ts-mode) . spec-contract-eglot-contact))

(provide 'spec-contract-eglot)
;;; spec-contract-eglot.el ends here
