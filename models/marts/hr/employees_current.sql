{{ typed_current('HR.EMPLOYEES', 'qlik', hr_employees_columns()) }}
