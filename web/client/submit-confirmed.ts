/**
 * Submits a form whose action the user has just confirmed in a dialog. A live refresh may have replaced
 * it meanwhile (the table, the /ops status), and the browser does not submit a form that is no longer in
 * the document: "Yes" would do nothing, silently. Such a form is put back, hidden, and submitted: it
 * carries what the user confirmed (the action, the CSRF token, the idempotency key of their page).
 */
export function submitConfirmed(form: HTMLFormElement): void {
  if (!form.isConnected) {
    form.hidden = true;
    document.body.append(form);
  }
  form.submit();
}
