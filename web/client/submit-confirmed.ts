/**
 * Submits a form whose action the user has just confirmed in a dialog. A live refresh may have replaced
 * it meanwhile (the table, the /ops status), and the browser does not submit a form that is no longer in
 * the document: "Yes" would do nothing, silently. Such a form is put back, hidden, and submitted: it
 * carries what the user confirmed (the action and the idempotency key of their page) and the page's
 * current form token.
 */
export function submitConfirmed(form: HTMLFormElement): void {
  if (!form.isConnected) {
    // A session renewed meanwhile updated the page's token, not this detached form's.
    const token = document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')?.content;
    const field = form.querySelector<HTMLInputElement>('input[name="_csrf"]');
    if (token && field) field.value = token;
    form.hidden = true;
    document.body.append(form);
  }
  form.submit();
}
