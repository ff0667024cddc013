// Generated from admin/ by scripts/generate.ts. Do not edit: run `pnpm generate`.

export const adminLimits = {
  "label": {
    "minLength": 1,
    "maxLength": 200
  },
  "customerId": {
    "minLength": 1,
    "maxLength": 255
  },
  "perMinute": {
    "minimum": 1,
    "maximum": 1000000000
  },
  "perDay": {
    "minimum": 1,
    "maximum": 1000000000
  },
  "gracePeriodSeconds": {
    "minimum": 0,
    "maximum": 2592000
  },
  "search": {
    "minLength": 1,
    "maxLength": 255
  },
  "auditActor": {
    "minLength": 1,
    "maxLength": 64
  },
  "keyId": {
    "pattern": "^[0-9a-f]{12}$",
    "length": 12
  }
} as const;
