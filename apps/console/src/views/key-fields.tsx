// The fields that describe a key, shared by the form that creates one and the form that changes one: its
// plan (with an enterprise key's two limits), label and customer; and the plan picker the keys' filter uses.
import { type AdminKey, adminLimits } from '@animal-store/client/admin';
import { plans } from '../format.js';

export type Plan = AdminKey['plan'];
export type KeyFieldValues = {
  plan: Plan;
  perMinute: string;
  perDay: string;
  label: string;
  customerId: string;
};

/** A plan picker; `any` adds a first choice for no plan (its label). */
export function PlanSelect(props: { value: string; onChange: (plan: string) => void; any?: string }) {
  return (
    <label>
      Plan
      <select value={props.value} onChange={(event) => props.onChange(event.currentTarget.value)}>
        {props.any !== undefined && <option value="">{props.any}</option>}
        {plans.map((name) => (
          <option key={name} value={name}>
            {name}
          </option>
        ))}
      </select>
    </label>
  );
}

/** A positive whole number of requests, as the admin contract's Limits allow. */
function LimitInput(props: {
  label: string;
  bounds: typeof adminLimits.perMinute;
  value: string;
  onInput: (value: string) => void;
}) {
  return (
    <label>
      {props.label}
      <input
        type="number"
        min={props.bounds.minimum}
        max={props.bounds.maximum}
        required
        value={props.value}
        onInput={(event) => props.onInput(event.currentTarget.value)}
      />
    </label>
  );
}

export function KeyFields(props: {
  values: KeyFieldValues;
  onChange: (change: Partial<KeyFieldValues>) => void;
  /** Label and customer may be left empty (a new key); their labels say so. */
  optional?: boolean;
}) {
  const { values, onChange } = props;
  const maybe = props.optional ? ' (optional)' : '';
  return (
    <>
      <PlanSelect value={values.plan} onChange={(plan) => onChange({ plan: plan as Plan })} />
      {values.plan === 'enterprise' && (
        <>
          <LimitInput
            label="Requests a minute"
            bounds={adminLimits.perMinute}
            value={values.perMinute}
            onInput={(perMinute) => onChange({ perMinute })}
          />
          <LimitInput
            label="Requests a day"
            bounds={adminLimits.perDay}
            value={values.perDay}
            onInput={(perDay) => onChange({ perDay })}
          />
        </>
      )}
      <label>
        Label{maybe}
        <input
          value={values.label}
          maxLength={adminLimits.label.maxLength}
          onInput={(event) => onChange({ label: event.currentTarget.value })}
        />
      </label>
      <label>
        Customer{maybe}
        <input
          value={values.customerId}
          maxLength={adminLimits.customerId.maxLength}
          spellcheck={false}
          onInput={(event) => onChange({ customerId: event.currentTarget.value })}
        />
      </label>
    </>
  );
}
