;;; eglot_e2e.el --- Batch Emacs + Eglot session against the spec-contract server  -*- lexical-binding: t; -*-

;; Run by test_emacs.py as `emacs --batch -l eglot_e2e.el' (not -Q: Debian's site-start puts the
;; elpa packages on the load path).  It loads the shipped editors/emacs/spec-contract-eglot.el,
;; does what a user does (wait for diagnostics, hover the class, pick the quick fix from the
;; code-action menu, save) and writes what it saw to a JSON report; the assertions live in pytest.
;;
;; Environment: SC_PYTHON (interpreter that runs the server), SC_FILE (file to open),
;; SC_REPORT (JSON report path), SC_EDITORS_DIR (the repository's editors/ folder),
;; SC_TITLE (quick fix to apply), SC_METHOD (method it forwards), SC_TIMEOUT_MS.

;;; Code:

(require 'package)
(package-activate-all)
(require 'eglot)
(require 'json)
(load (expand-file-name "emacs/spec-contract-eglot.el" (getenv "SC_EDITORS_DIR")) nil t)

(defvar sc-timeout (/ (string-to-number (or (getenv "SC_TIMEOUT_MS") "120000")) 1000.0))

(setq spec-contract-eglot-python (getenv "SC_PYTHON")
      eglot-sync-connect t
      eglot-connect-timeout sc-timeout
      ;; Eglot's own requests (code actions) wait this long; 10 s by default, too short on a loaded machine.
      jsonrpc-default-request-timeout sc-timeout)
(defvar sc-method (getenv "SC_METHOD"))
(defvar sc-started (float-time))
(defvar sc-report nil "Alist written as the JSON report.")
(defvar sc-server nil "The Eglot server of the session.")

(defvar sc-messages nil "What the server told the user; a rejected setting comes as a warning.")

(cl-defmethod eglot-handle-notification :before
  (_server (_method (eql window/showMessage)) &key type message)
  (push `((type . ,type) (message . ,message)) sc-messages))

(defun sc-elapsed-ms () (round (* 1000 (- (float-time) sc-started))))

(defun sc-record (key value) (push (cons key value) sc-report))

(defun sc-finish (error)
  "Write the report (with ERROR, nil on success) and exit."
  (sc-record 'error error)
  (sc-record 'messages (vconcat (reverse sc-messages)))
  (sc-record 'elapsed_ms (sc-elapsed-ms))
  (with-temp-file (getenv "SC_REPORT")
    (insert (json-encode sc-report)))
  (kill-emacs (if error 1 0)))

(defun sc-wait (predicate)
  "Process server output until PREDICATE holds or `sc-timeout' passes; return PREDICATE's value.
A server that exits ends the session at once instead of after the timeout."
  (let ((deadline (+ (float-time) sc-timeout)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (unless (jsonrpc-running-p sc-server)
        (sc-finish "the server exited"))
      ;; Flymake does not start its backends by itself in batch mode.
      (flymake-start)
      (accept-process-output nil 0.05))
    (funcall predicate)))

(defun sc-lsp-diag (diag)
  "The LSP diagnostic Eglot keeps behind flymake DIAG."
  (cdr (assoc 'eglot-lsp-diag (eglot--diag-data diag))))

(defun sc-our-diagnostics ()
  (cl-remove-if-not (lambda (d) (equal (plist-get (sc-lsp-diag d) :source) "spec-contract"))
                    (flymake-diagnostics)))

(defun sc-summary (diags)
  (vconcat
   (mapcar (lambda (d)
             (let* ((lsp (sc-lsp-diag d))
                    (start (plist-get (plist-get lsp :range) :start)))
               `((code . ,(plist-get lsp :code)) (source . ,(plist-get lsp :source))
                 (message . ,(plist-get lsp :message)) (severity . ,(plist-get lsp :severity))
                 (lnum . ,(plist-get start :line)) (col . ,(plist-get start :character)))))
           diags)))

(defun sc-mentions (diags method)
  (cl-some (lambda (d) (string-search method (plist-get (sc-lsp-diag d) :message))) diags))

(defun sc-hover-text (hover)
  (let ((contents (plist-get hover :contents)))
    (cond ((stringp contents) contents)
          ((plist-get contents :value))
          (t (mapconcat (lambda (c) (if (stringp c) c (plist-get c :value))) contents "\n")))))

(defun sc-run ()
  (find-file (getenv "SC_FILE"))
  (apply #'eglot (eglot--guess-contact))
  (setq sc-server (eglot-current-server))
  (unless sc-server (sc-finish "eglot did not start the server"))
  (sc-record 'server_name (plist-get (eglot--server-info sc-server) :name))
  (sc-record 'project_root (project-root (eglot--project sc-server)))

  (sc-wait (lambda () (>= (length (sc-our-diagnostics)) 2)))
  (let* ((diags (sc-our-diagnostics))
         (target (cl-find-if (lambda (d) (string-search sc-method (plist-get (sc-lsp-diag d) :message)))
                             diags)))
    (sc-record 'diagnostics (sc-summary diags))
    (sc-record 'diagnostics_ms (sc-elapsed-ms))
    (unless target (sc-finish (format "no diagnostic mentions %s" sc-method)))

    ;; Hover with point inside the class name, as a user would.
    (goto-char (1+ (flymake-diagnostic-beg target)))
    (condition-case err
        (sc-record 'hover (sc-hover-text
                           (jsonrpc-request sc-server :textDocument/hover
                                            (eglot--TextDocumentPositionParams))))
      (error (sc-record 'hover_error (format "%S" err))))

    ;; The code-action menu: list the quick fixes, then pick ours the way a user picks from the menu.
    (let* ((beg (flymake-diagnostic-beg target))
           (end (flymake-diagnostic-end target))
           (actions (eglot-code-actions beg end "quickfix"))
           (title (getenv "SC_TITLE")))
      (sc-record 'action_titles (vconcat (mapcar (lambda (a) (plist-get a :title)) actions)))
      (unless (cl-find title actions :key (lambda (a) (plist-get a :title)) :test #'equal)
        (sc-finish (format "no code action titled %s" title)))
      ;; Batch mode has no menu to click: answer it with our title.  Eglot 1.9 shows a popup menu
      ;; when the last event was not from the keyboard (nil counts as a mouse event here), later
      ;; Eglots read the choice with `completing-read'.
      (let ((last-nonmenu-event nil))
        (cl-letf (((symbol-function 'completing-read) (lambda (&rest _) title))
                  ((symbol-function 'x-popup-menu)
                   (lambda (_event menu) (cdr (assoc title (cdr (cadr menu)))))))
          (eglot-code-actions beg end "quickfix" t)))))
  (save-buffer)
  (sc-record 'saved_ms (sc-elapsed-ms))

  ;; The server re-checks the edited buffer: the fixed member's diagnostic goes, the other stays.
  (sc-wait (lambda () (not (sc-mentions (sc-our-diagnostics) sc-method))))
  (sc-record 'diagnostics_after (sc-summary (sc-our-diagnostics)))
  (eglot-shutdown sc-server)
  (sc-finish nil))

(condition-case err
    (sc-run)
  (error (sc-finish (format "driver error: %S" err))))

;;; eglot_e2e.el ends here
