import type { ComponentType, ReactElement } from 'react';

/**
 * Server-renders a client island: the component's HTML plus its props, so the browser bundle can
 * hydrate it with the same props. Props travel in an attribute (escaped by React), never in a script.
 */
export function Island<P extends object>({
  name,
  component: Component,
  props,
}: {
  name: string;
  component: ComponentType<P>;
  props: P;
}): ReactElement {
  return (
    <div data-island={name} data-props={JSON.stringify(props)}>
      <Component {...props} />
    </div>
  );
}
